"""What drives a coordinator or a client and judges it: scenario replay (``scenario``), Hypothesis
stateful fuzzing (``fuzz``), broker conformance (``conformance``) and real consumer clients
under test (``clients``)."""
