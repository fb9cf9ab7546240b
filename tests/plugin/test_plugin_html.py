"""`--strands-chaos-html`: one offline file, opened in a real headless Chromium: totals and seed at the top, a
timeline per workflow coloured by outcome, points grouped by unit and site kind, and a click on a failing point
that shows its rule and its diff against the golden run."""

from __future__ import annotations

import json
import re

import pytest

from pytest_strands.html import render_html
from tests.plugin.browser import chromium_page
from tests.plugin.support import MUTATIONS, add_research_spec

SCRIPT = "<script>window.pwned = 1</script>"


def _expected_outcome(item: dict) -> str:
    if item["invalid_histories"]:
        return "invalid"
    return "diverged" if item["divergences"] else "passed"


def test_the_html_report_renders_every_point_and_a_click_shows_the_rule_and_diff(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(MUTATIONS["memory_only_state_two_units_later"])  # resumes diverge with a readable diff
    html_path, json_path = pytester.path / "out" / "chaos.html", pytester.path / "out" / "chaos.json"
    result = pytester.runpytest_subprocess(
        "--strands-chaos",
        "--strands-chaos-max-points=30",
        "--strands-chaos-schedules=0",
        "-p",
        "no:cacheprovider",
        f"--strands-chaos-html={html_path}",
        f"--strands-chaos-report={json_path}",
    )
    assert f"strands-chaos: HTML report {html_path}" in result.stdout.str()
    body = json.loads(json_path.read_text())
    points = {item["point"]: item for item in body["items"] if item["kind"] == "point"}
    failing = [p for p, item in points.items() if item["problems"] and "\n" in item["problems"][0]]
    assert len(points) == 30 and failing, "the mutation must make some points diverge with a diff"
    html = html_path.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # nothing fetched: one offline file

    requests: list[str] = []
    with chromium_page(viewport={"width": 1400, "height": 1000}) as page:
        page.on("request", lambda request: requests.append(request.url))
        page.goto(html_path.as_uri())
        assert page.title() == "strands-chaos report: seed 0"
        assert page.locator("#summary").inner_text() == body["summary"]
        assert page.locator("#seed").inner_text() == "0"
        assert f"{body['divergences']}\ndivergences" in page.locator("#totals").inner_text()

        section = page.locator('section.group[data-group="research.strands.yaml"]')
        timeline = section.locator(".timeline .pt")
        rendered = {
            timeline.nth(i).get_attribute("title").rsplit(" (", 1)[0]: timeline.nth(i).get_attribute("class")
            for i in range(timeline.count())
        }
        assert list(rendered) == sorted(points, key=lambda p: points[p]["run_index"])  # the golden run's order
        for point_id, item in points.items():
            assert rendered[point_id] == f"pt {_expected_outcome(item)}", point_id
        units = section.locator("table.grid tbody th.unit").all_inner_texts()
        assert units == ["step[0]:researcher", "step[1]:researcher", "step[2]:writer"]
        assert section.locator("table.grid tbody .pt").count() == len(points)  # each point once in the grid

        detail = page.locator("#detail")
        assert detail.is_hidden()
        target = failing[0]
        section.locator(f'.timeline .pt[title^="{target} ("]').click()
        assert detail.is_visible()
        assert detail.locator(".point-id").inner_text() == target
        problem = points[target]["problems"][0]
        rule = re.match(r"\[([\w-]+)\]", problem).group(1)
        assert detail.locator(".rule").first.inner_text() == rule
        diff_lines = [line.strip() for line in problem.split("\n")[1:]]
        removed = [line for line in diff_lines if line.startswith("-") and not line.startswith("---")]
        added = [line for line in diff_lines if line.startswith("+") and not line.startswith("+++")]
        assert removed and added
        assert detail.locator("pre.diff .del").first.inner_text().strip() == removed[0]
        assert detail.locator("pre.diff .add").first.inner_text().strip() == added[0]
        detail.locator("button.close").click()
        assert detail.is_hidden()
    assert requests and all(url.startswith("file://") for url in requests), requests


def test_agent_records_render_by_their_own_unit_and_site_kind() -> None:
    """The data model is not tied to spec ids: any record with a group, a point id, a unit, a site and problems."""
    records = [
        {"kind": "golden", "agent": "support-bot", "workflow": "test_bot.py", "problems": [], "divergences": 0},
        *[
            {
                "kind": "point",
                "agent": "support-bot",
                "workflow": "test_bot.py",
                "point": f"agent:support-bot/invocation[{n}]/{site}",  # the record's unit, not the id's, groups it
                "unit": f"invocation[{n}]",
                "site": site,
                "fired": "yes",
                "divergences": int(n == 1 and site == "tool.before"),
                "invalid_histories": 0,
                "problems": [f"[tool-rerun] lookup ran twice {SCRIPT}"] if n == 1 and site == "tool.before" else [],
            }
            for n in range(2)
            for site in ("invocation.before", "tool.before", "message.added")
        ],
    ]
    body = {
        "summary": "strands-chaos: 6 crash points explored in 1 workflows (3 site kinds), 1 divergences, "
        "0 invalid histories, seed 7",
        "seed": 7,
        "crash_points_explored": 6,
        "workflows": ["test_bot.py"],
        "divergences": 1,
        "invalid_histories": 0,
        "faults": ["interrupt"],
        "mode": "convergence",
        "not_explorable": [],
        "items": records,
    }
    with chromium_page() as page:
        page.set_content(render_html(body))
        section = page.locator('section.group[data-group="support-bot"]')
        assert section.locator(".kind").inner_text().lower() == "agent"
        assert section.locator("table.grid tbody th.unit").all_inner_texts() == ["invocation[0]", "invocation[1]"]
        headers = section.locator("table.grid thead th").all_inner_texts()[1:]
        assert sorted(headers) == ["invocation.before", "message.added", "tool.before"]
        section.locator(".timeline .pt.diverged").click()
        assert page.locator("#detail .rule").inner_text() == "tool-rerun"
        assert page.locator("#detail .point-id").inner_text() == "agent:support-bot/invocation[1]/tool.before"
        assert SCRIPT in page.locator("#detail .problem").inner_text()  # model text is shown, never run
        assert page.evaluate("window.pwned") is None


def test_a_missing_browser_fails_in_ci_and_says_how_to_install_it_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no chromium on it
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"Chromium is missing.*apt-get install"), chromium_page():
        pass
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="apt-get install -y chromium"), chromium_page():
        pass


def test_a_report_path_that_cannot_be_written_is_a_usage_error_before_the_run(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    (pytester.path / "taken").write_text("a file, not a directory")
    result = pytester.runpytest_inprocess("--strands-chaos", "--strands-chaos-html=taken/chaos.html")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--strands-chaos-html: cannot write taken/chaos.html: {pytester.path / 'taken'} is not a directory" in (
        result.stderr.str()
    )


def test_a_report_that_fails_to_write_after_the_run_fails_it_with_one_line(pytester: pytest.Pytester) -> None:
    add_research_spec(pytester)
    pytester.makeconftest(
        """
import pathlib
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    out = pathlib.Path("out")
    out.rmdir()
    out.write_text("the directory became a file while the run went on")
"""
    )
    (pytester.path / "out").mkdir()
    result = pytester.runpytest_inprocess(
        "--strands-chaos",
        "--strands-chaos-max-points=1",
        "--strands-chaos-schedules=0",
        "--strands-chaos-html=out/r.html",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    errors = [line for line in result.stdout.lines if line.startswith("Error: ")]
    assert errors == ["Error: strands-chaos: cannot write out/r.html: Not a directory"], result.stdout.str()[-2000:]
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
