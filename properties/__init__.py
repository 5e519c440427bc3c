"""properties package."""
