"""What every LLM stage shares, under both ``contexts`` and ``generate`` and importing neither.

``config`` (the base of every stage config, and the models and embedders one may name), ``call``
(a stage's one request), ``batch`` (many items per request), ``text`` (the blocks a prompt is made
of), ``stats`` (``StageStats``: counts in, out and dropped by reason, and usage) and ``templates``
(``PromptSet``: the prompts, package data under ``prompts/``).
"""
