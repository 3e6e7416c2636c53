"""Plotly figures of the reports (the run timeline, the verdict trend) as HTML fragments.

Pages embed plotly.js once, inline in their head (`plotly_js`), and every figure is a
fragment without it: the files work offline and carry the library a single time.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from functools import cache

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs
from plotly.subplots import make_subplots

from harness.report.series import Band, Timeline
from harness.report.summary import RunSummary

VERDICT_COLOURS = {"valid": "#1a7f37", "invalid": "#cf222e", "unknown": "#bf8700"}
FAULT_COLOURS = (
    "#d1242f", "#8250df", "#0969da", "#bc4c00", "#1f883d", "#bf3989", "#57606a", "#9a6700",
)
CONFIG = {"displaylogo": False, "responsive": True}
MIN_BAND_FRACTION = 0.004  # a kill is an instant; give it a visible sliver


@cache
def plotly_js() -> str:
    return get_plotlyjs()


def to_div(fig: go.Figure, div_id: str) -> str:
    return fig.to_html(
        full_html=False, include_plotlyjs=False, div_id=div_id, config=CONFIG
    )


def _fault_colours(bands: Iterable[Band]) -> dict[str, str]:
    kinds = sorted({b.fault for b in bands})
    return {k: FAULT_COLOURS[i % len(FAULT_COLOURS)] for i, k in enumerate(kinds)}


def _target_order(bands: Sequence[Band], pods: Sequence[str]) -> list[str]:
    """Every pod gets a row (a pod without faults is information too), then brokers and
    anything else the nemesis touched."""
    targets = list(dict.fromkeys([*pods, *sorted({b.target for b in bands})]))
    return sorted(targets, key=lambda t: (not t.startswith("pod"), t))


def _shade_faults(fig: go.Figure, tl: Timeline, rows: int) -> None:
    """Each fault's interval shaded on every row, in one layout update with the shapes
    spelt out: plotly's add_vrect(row="all") validates the whole figure per band (a 60 s
    run's report: 0.98 s with it, 0.49 s without, median of 4 at load 7)."""
    colours = _fault_colours(tl.bands)
    min_width = tl.span_s * MIN_BAND_FRACTION
    shapes = [
        {"type": "rect", "xref": f"x{axis}", "yref": f"y{axis} domain", "y0": 0, "y1": 1,
         "x0": b.start_s, "x1": max(b.end_s, b.start_s + min_width),
         "fillcolor": colours[b.fault], "opacity": 0.08, "line": {"width": 0}}
        for b in tl.bands
        for axis in ["", *map(str, range(2, rows + 1))]
    ]
    fig.update_layout(shapes=shapes)


def _add_bands(fig: go.Figure, tl: Timeline, pods: Sequence[str]) -> None:
    colours = _fault_colours(tl.bands)
    min_width = tl.span_s * MIN_BAND_FRACTION
    for fault, colour in colours.items():
        mine = [b for b in tl.bands if b.fault == fault]
        fig.add_trace(
            go.Bar(
                name=fault,
                legendgroup="faults",
                legendgrouptitle_text="faults",
                orientation="h",
                y=[b.target for b in mine],
                base=[b.start_s for b in mine],
                x=[max(b.end_s - b.start_s, min_width) for b in mine],
                marker={"color": colour, "opacity": 0.85},
                customdata=[
                    [
                        round(b.end_s - b.start_s, 2),
                        "healed" if b.healed else "not healed",
                        b.params,
                    ]
                    for b in mine
                ],
                hovertemplate=(
                    f"<b>{fault}</b> %{{y}}<br>from %{{base:.1f}} s for %{{customdata[0]}} s"
                    "<br>%{customdata[1]}<br>%{customdata[2]}<extra></extra>"
                ),
            ),
            row=1,
            col=1,
        )
    for what, symbol, colour in (("pod-exited", "x", "#cf222e"),
                                 ("pod-restarted", "triangle-up", "#1a7f37")):
        events = [e for e in tl.pod_events if e.what == what]
        if events:
            fig.add_trace(
                go.Scatter(
                    name=what.removeprefix("pod-"), legendgroup="pods",
                    legendgrouptitle_text="pod processes", mode="markers",
                    x=[e.at_s for e in events], y=[e.target for e in events],
                    marker={"symbol": symbol, "size": 11, "color": colour},
                    customdata=[e.text for e in events],
                    hovertemplate=f"<b>{what}</b> %{{y}} at %{{x:.1f}} s<br>"
                                  "%{customdata}<extra></extra>",
                ),
                row=1, col=1,
            )
    order = _target_order(tl.bands, pods)
    fig.update_yaxes(
        categoryorder="array", categoryarray=list(reversed(order)), type="category",
        row=1, col=1,
    )
    if order:  # pods without faults still get their row
        fig.add_trace(
            go.Scatter(x=[None] * len(order), y=order, mode="markers", showlegend=False),
            row=1, col=1,
        )


TIMELINE_ROWS = 4


def timeline_figure(tl: Timeline, pods: Sequence[str]) -> go.Figure:
    fig = make_subplots(
        rows=TIMELINE_ROWS,
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.05,
        row_heights=[0.22, 0.28, 0.25, 0.25],
        subplot_titles=[
            f"faults per pod and broker (from {tl.band_source})",
            *(("topic throughput (records/s, from end offsets)",
               "group lag (input records not committed, sampled)")
              if tl.topic_rates else
              ("client throughput (acks/s)", "consumer lag (records acked - committed)")),
            "transaction commits per pod (/s)",
        ],
    )
    _add_bands(fig, tl, pods)
    if tl.topic_rates:
        _add_topic_rows(fig, tl)
    else:
        _add_client_rows(fig, tl)
    for pod, rates in tl.commits.items():
        fig.add_trace(
            go.Scatter(x=tl.bins, y=rates, name=pod, legendgroup="commits",
                       legendgrouptitle_text="commits", line_shape="hv"),
            row=4, col=1,
        )
    _shade_faults(fig, tl, TIMELINE_ROWS)
    fig.update_xaxes(title_text=f"seconds since load start (bins of {tl.bin_s:g} s)",
                     row=4, col=1)
    fig.update_layout(
        template="plotly_white", height=900, barmode="overlay", hovermode="closest",
        margin={"l": 70, "r": 20, "t": 40, "b": 50},
        legend={"groupclick": "toggleitem"},
    )
    return fig


def _add_client_rows(fig: go.Figure, tl: Timeline) -> None:
    """A ledger run's: its client's acks, and the lag from them and the traced commits."""
    fig.add_trace(
        go.Scatter(x=tl.bins, y=tl.acks, name="acked", line={"color": "#0969da"},
                   legendgroup="client", legendgrouptitle_text="client", line_shape="hv"),
        row=2, col=1,
    )
    if any(tl.indeterminate):
        fig.add_trace(
            go.Scatter(x=tl.bins, y=tl.indeterminate, name="indeterminate (info)",
                       legendgroup="client", line={"color": "#bf8700"}, line_shape="hv"),
            row=2, col=1,
        )
    _lag_row(fig, tl.bins, tl.lag, "lag", "client", "no commit offsets in the traces")


def _add_topic_rows(fig: go.Figure, tl: Timeline) -> None:
    """An app run's: its input and output topics' rates, its group's lag."""
    for name, rates in tl.topic_rates.items():
        fig.add_trace(
            go.Scatter(x=tl.bins, y=rates, name=name, legendgroup="topics",
                       legendgrouptitle_text="topics", line_shape="hv",
                       line={"dash": "dot" if name.startswith("out: ") else "solid"}),
            row=2, col=1,
        )
    _lag_row(fig, tl.bins, tl.group_lag, "group lag", "topics",
             "the group's lag was not sampled")


def _lag_row(fig: go.Figure, bins: list[float], lag: list[float] | None, name: str,
             group: str, missing: str) -> None:
    """The third row: a lag series, or why there is none."""
    if lag is not None:
        fig.add_trace(
            go.Scatter(x=bins, y=lag, name=name, line={"color": "#8250df"},
                       fill="tozeroy", legendgroup=group, line_shape="hv"),
            row=3, col=1,
        )
    else:
        fig.add_annotation(text=missing, showarrow=False,
                           xref="x3 domain", yref="y3 domain", x=0.5, y=0.5)


def trend_figure(summaries: Sequence[RunSummary]) -> go.Figure:
    """Each run a dot on its profile's row over time, coloured by verdict; a diamond marks a
    run with a bug switched on (where red is the expected colour)."""
    dated = [s for s in summaries if s.started_at is not None]
    fig = go.Figure()
    # "no verdict" (a run that crashed) shares amber with unknown, as in the table.
    for label, colour in (*VERDICT_COLOURS.items(), ("no verdict", VERDICT_COLOURS["unknown"])):
        mine = [s for s in dated if s.label == label]
        if not mine:
            continue
        fig.add_trace(
            go.Scatter(
                name=label,
                mode="markers",
                x=[s.started_at for s in mine],
                y=[s.profile for s in mine],
                marker={
                    "color": colour,
                    "size": 12,
                    "symbol": ["circle" if s.fixed_worker else "diamond" for s in mine],
                    "line": {"width": 1, "color": "white"},
                },
                customdata=[
                    [s.run_id, s.seed, ",".join(s.bugs) or "none", s.anomalies_text]
                    for s in mine
                ],
                hovertemplate=(
                    "%{customdata[0]}<br>seed %{customdata[1]}, bugs %{customdata[2]}"
                    "<br>%{customdata[3]}<extra>" + label + "</extra>"
                ),
            )
        )
    profiles = sorted({s.profile for s in dated})
    times = [s.started_at for s in dated if s.started_at]
    if times and max(times) - min(times) < timedelta(hours=1):
        # Runs close together (or just one): plotly would zoom to milliseconds.
        fig.update_xaxes(range=[min(times) - timedelta(hours=1), max(times) + timedelta(hours=1)])
    fig.update_yaxes(type="category", categoryorder="array", categoryarray=profiles)
    fig.update_layout(
        template="plotly_white",
        height=max(260, 120 + 40 * len(profiles)),
        margin={"l": 120, "r": 20, "t": 30, "b": 40},
        xaxis_title="run start",
        legend_title_text="verdict (diamond: bug switched on)",
    )
    return fig
