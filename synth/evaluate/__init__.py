"""Evaluation: judges, text and retrieval metrics, agreement, reports, comparisons, benchmarks.

Import the public names from ``synth``. The modules, in the order the data flows:
``contexts`` (texts and ids of whatever a retriever returns), ``text`` (exact match, token F1),
``retrieval`` (scores by context id), ``judge`` (LLM judges: the model labels, a formula scores),
``answers`` (evaluate a system's answers), ``preference`` (head to head), ``agreement`` (kappas and
alpha), ``stats`` (bootstrap, sign-flip test), ``report`` (the report family and its formats),
``compare`` (two reports, paired) and ``benchmark`` (several systems, one leaderboard).
"""
