"""One map from an object to its view: IPython's display, the shared snapshots and the side panel all show what views.view_for gives."""

from __future__ import annotations

import pytest
from sample_records import sample_record

import tilelab
from tilelab._bridge_items import live_view_bundle, snapshot_html
from tilelab.recompiled import why
from tilelab.runs import SinceLastRun
from tilelab.sharing import to_html
from tilelab.tune.result import TuneResult, TuneRow, TuneStatus
from tilelab.views import view_for, viewed_types
from tilelab.views.compare import CompareView
from tilelab.views.compare.changes import SinceLastRunView, WhyView
from tilelab.views.explorer import ExplorerView
from tilelab.views.tuning import TuningView


def _run() -> TuneResult:
    configs = ({"block": 64}, {"block": 128})
    result = TuneResult("matmul", configs, ("block",), "cpu")
    for index, config in enumerate(configs):
        result.add(TuneRow(index, config, TuneStatus.OK, latency_ms=1.0 + index))
    return result


RECORD, RUN = sample_record(), _run()
KINDS = {  # an object of each kind, the view it shows as, and its kind in the panel's protocol (None: not served)
    "record": (RECORD, ExplorerView, "record"),
    "tuning run": (RUN, TuningView, "tuning"),
    "since the last run": (SinceLastRun("gemm", 1, None), SinceLastRunView, None),
    "why it recompiled": (why(RECORD, RECORD), WhyView, None),
    "comparison": (tilelab.compare(RECORD, sample_record(arch="sm_80")), CompareView, None),
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_of_object_has_its_view(kind):
    obj, view_type, _ = KINDS[kind]

    view = view_for(obj)

    assert type(view) is view_type
    assert view is obj if isinstance(obj, view_type) else type(obj) in viewed_types()


@pytest.mark.parametrize("kind", KINDS)
def test_display_and_sharing_show_the_view_that_view_for_gives(ip, kind):
    obj, _, _ = KINDS[kind]
    view = view_for(obj)

    shown, _ = ip.display_formatter.format(obj)

    bundle = view._repr_mimebundle_()
    assert (shown["text/html"], shown["text/plain"]) == (bundle["text/html"], bundle["text/plain"])
    assert to_html(obj) == view.to_html()


@pytest.mark.parametrize("kind", [kind for kind, (_, _, served) in KINDS.items() if served])
def test_the_panel_is_served_the_view_that_view_for_gives(kind):
    obj, _, served = KINDS[kind]
    view = view_for(obj)

    bundle, problem = live_view_bundle(obj, served)

    assert snapshot_html(obj, served) == view.to_html()
    assert problem is None and bundle["text/plain"] == repr(view)


def test_an_object_without_a_view_has_none_and_shows_as_itself():
    assert view_for(object()) is None and to_html(3) == "<pre>3</pre>"
