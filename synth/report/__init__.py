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

from synth.report._manifest import find_manifest, load_manifest
from synth.report.benchmark import benchmark_report
from synth.report.comparison import comparison_report
from synth.report.dataset import dataset_report
from synth.report.evaluation import evaluation_report

__all__ = [
    "benchmark_report",
    "comparison_report",
    "dataset_report",
    "evaluation_report",
    "find_manifest",
    "load_manifest",
]
