"""Evaluation: judges, text and retrieval metrics, agreement, reports, comparisons, benchmarks.

Import the public names from ``synth``. The modules, in the order the data flows:
``retrieved`` (texts and ids of whatever a retriever returns), ``text`` (exact match, token F1),
``retrieval`` (scores by context id), ``judge`` (LLM judges: the model labels, a formula scores),
``answers`` (evaluate a system's answers), ``preference`` (head to head), ``agreement`` (kappas and
alpha), ``stats`` (bootstrap, sign-flip test), ``report`` (every kind of report and its formats),
``compare`` (two reports, paired) and ``benchmark`` (several systems, one leaderboard). The
evaluators share ``_items`` (the dataset as items), ``_jobs`` (running user code, ``n_jobs`` at a
time), ``_calls`` (models as judges) and ``_io`` (report files, written atomically).
"""
