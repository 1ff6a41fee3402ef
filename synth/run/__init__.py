"""The run machinery: what makes a pipeline resumable and observable.

In the order a run uses them: ``config`` (the pipeline file), ``inputs`` (what the
``generate_goldens_from_*`` methods accept), ``models`` (the models and embedders a run owns),
``setup`` (a run's configs, session and feed), ``ingest`` (stage 1 for a run), ``dir`` (the run
directory and its journals), ``session`` and ``stream`` (one run's goldens in flight),
``stages`` (walks ``synth.generate.steps`` for each candidate), ``rejects``, ``manifest``,
``plan``, ``progress`` and ``output``. A session hands over goldens and their metadata; the
Datasets are made above, in ``synth.pipeline``.
"""
