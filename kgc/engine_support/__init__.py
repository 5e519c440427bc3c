"""What the engines do with Kafka's group model that is Kafka's own: transitions counted per branch of the
coordinator's handlers (``coverage``, ``kgc check --coverage``) and mutation runs over the mutant catalogue
(``mutation``, ``kgc mutants`` and ``kgc bugs``), and two models' behaviours explored side by side and
compared (``diff``, ``kgc diff``: the verb only parses and prints). They drive the generic engines of
``kgc.explorer``, which import none of this."""
