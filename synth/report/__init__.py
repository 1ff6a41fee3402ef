"""Reports as self-contained HTML pages, for the people who will not read a JSON file.

- :func:`dataset_report`: a dataset's page (``synth report DATASET -o dataset.html``)
- :func:`evaluation_report`: a ``synth evaluate`` report's page (answers, retrieval, preference)
- :func:`comparison_report`: a ``synth compare`` result's page (with the two reports, the items
  they disagree on most)
- :func:`benchmark_report`: a ``synth benchmark`` result's page
- :func:`find_manifest`, :func:`load_manifest`: the run manifest a dataset report draws on

Every report is one file with its scripts, styles and plot library (plotly.js) inlined: it opens
from disk with no network. The shared machinery is in :mod:`synth.report._html` (templates,
the bundle, script-safe JSON); a report kind is one template under ``templates/`` and one function
that gathers its data. Reports are functions returning the page, not ``Dataset.to_html``:
:mod:`synth.report` draws on :mod:`synth.dataset`, so a method there would close an import cycle.
"""

import typing as _typing

from synth._lazy import lazy_names as _lazy_names
from synth._manifest import find_manifest, load_manifest

if _typing.TYPE_CHECKING:
    from synth.report.benchmark import benchmark_report
    from synth.report.comparison import comparison_report
    from synth.report.dataset import dataset_report
    from synth.report.evaluation import evaluation_report

#: each report function's module, imported when the function is first read: a run reads its
#: manifest through this package (synth.dataset.refill) and must not import the evaluators with it
_HOME = {
    "benchmark_report": "synth.report.benchmark",
    "comparison_report": "synth.report.comparison",
    "dataset_report": "synth.report.dataset",
    "evaluation_report": "synth.report.evaluation",
}


__getattr__, __dir__ = _lazy_names(globals(), _HOME)

__all__ = [
    "benchmark_report",
    "comparison_report",
    "dataset_report",
    "evaluation_report",
    "find_manifest",
    "load_manifest",
]
