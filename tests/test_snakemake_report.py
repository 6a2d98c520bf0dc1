"""The Snakemake report (`make report PRESET=<preset>`), as a person sees it in a browser.

The report of the committed `workstation` reference run is built here from the committed tables
and figures alone (those of `results/workstation/` once every paper's run is committed there,
until then those of the runs archived from the preset it replaced, `committed_pages`), in a copy of the workflow without Snakemake's metadata (a fresh clone). With
LENEX_REPORT_HTML set (CI sets it to the tiny run's report after `make run` and `make report`),
the browser test opens that report instead and also checks the runtimes of the run's jobs.

The browser is Debian's Chromium driven by Selenium (scripts/report/install_browser.sh). Without
it the browser tests skip, or fail when LENEX_REQUIRE_BROWSER=1 (CI).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from filelock import FileLock
from subprocess_env import env_with_venv

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("lex", "receptive-field", "segmented")
REQUIRE_BROWSER = os.environ.get("LENEX_REQUIRE_BROWSER") == "1"
GIVEN_REPORT = os.environ.get("LENEX_REPORT_HTML")


def experiment(paper: str) -> dict:
    return yaml.safe_load((ROOT / "config" / "experiments" / f"{paper}.yaml").read_text())


def embedded(html: str, name: str, script: str | None = None):
    """The JSON the report embeds as `<script id=...> var <name> = ...;` (its app's data)."""
    script = script or name
    match = re.search(rf'<script id="{script}">\s*var {name} = (.*?);\s*</script>', html, re.S)
    assert match, f"report has no embedded `{name}`"
    return json.loads(match.group(1))


def committed_pages(preset: str = "workstation") -> Path:
    """The committed tables and figures of a preset's reference runs: results/<preset>/ once every
    paper's are committed there, until then those archived from the preset it replaced."""
    current = ROOT / "results" / preset
    if all((current / "tables" / paper).is_dir() for paper in PAPERS):
        return current
    archived = sorted((ROOT / "results" / "archive").glob(f"{preset}-*"))
    assert archived, f"no committed reference pages of preset {preset!r}, current or archived"
    return archived[-1]


def build_workstation_report(work: Path) -> Path:
    """`make report PRESET=workstation` in a copy holding only what git holds for that preset."""
    for name in ("Snakefile", "Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, work / name)
    for name in ("workflow", "config", "envs", "src"):
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("tables", "figures"):
        shutil.copytree(committed_pages() / name, work / "results" / "workstation" / name)
    # The copy has no venv of its own (its Makefile puts a missing .venv/bin first on PATH).
    env = env_with_venv(PYTHONPATH=str(work / "src"))
    # -o setup: use the environment running the tests instead of creating a venv in the copy.
    run = subprocess.run(["make", "-o", "setup", "report", "PRESET=workstation", "CORES=1"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return work / "results" / "workstation" / "report.html"


@pytest.fixture(scope="session")
def workstation_report(tmp_path_factory) -> Path:
    """Built once per test session, also across pytest-xdist workers, which share the folder
    above their own temporary folders (the pattern of pytest-xdist's documentation)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    with FileLock(str(shared / "lenex-workstation-report.lock")):
        work = shared / "lenex-workstation-report"
        report = work / "results" / "workstation" / "report.html"
        if not report.exists():
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            build_workstation_report(work)
        return report


def test_report_files_every_table_and_figure_by_paper(workstation_report):
    html = workstation_report.read_text(encoding="utf-8")
    # Self-contained: no script, style or image is fetched from anywhere.
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", html)
    categories, results = embedded(html, "categories"), embedded(html, "results")
    for paper in PAPERS:
        spec = experiment(paper)
        files = categories[spec["title"]]
        assert len(files["Tables"]) == len(spec["tables"]), paper
        assert files["Figures"], f"{paper}: no figure in the report"
        for path in files["Tables"]:
            entry = results[path]
            assert entry["mime_type"] == "text/html"
            page = base64.b64decode(entry["data_uri"].split("base64,", 1)[1]).decode()
            assert "<table>" in page and "<script" not in page
            title = experiment(paper)["tables"][Path(path).stem]["title"]
            assert entry["labels"]["table"].endswith(title)
            # The caption: the table's scale line and its stand-in corpora.
            assert "Ours: preset <code>workstation</code>" in entry["caption"], path
            assert "offline stand-in" in entry["caption"], path
        for path in files["Figures"]:
            assert results[path]["mime_type"] == "image/png"
            assert results[path]["data_uri"].startswith("data:image/png")
    # A fresh clone has no metadata of the run that made these files: the only runtimes are
    # those of the report's own jobs.
    runtimes = embedded(html, "runtimes_spec", "runtimes")["data"]["values"]
    assert {entry["rule"] for entry in runtimes} == {"report_table", "report_contents"}


# --- in a real browser ---------------------------------------------------------------------

def _browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        webdriver = None
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if webdriver is None or not chromium or not driver:
        why = "no headless browser (scripts/report/install_browser.sh, pip install selenium)"
        if REQUIRE_BROWSER:
            pytest.fail(f"LENEX_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1600,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


@pytest.fixture
def browser():
    driver = _browser()
    yield driver
    driver.quit()


@pytest.fixture
def report_html(request) -> Path:
    if GIVEN_REPORT:
        return Path(GIVEN_REPORT).resolve()
    return request.getfixturevalue("workstation_report")


def _click(driver, text: str, where: str = "//nav//a") -> None:
    """Click the link a person would: the one showing exactly `text`, once it stands still (the
    menu animates its width when the view changes, and a click while it moves misses)."""
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, 60)
    link = wait.until(lambda d: d.find_element("xpath", f"{where}[normalize-space(.)={json.dumps(text)}]"))
    wait.until(lambda d: _standing_still(link))
    link.click()


def _standing_still(element) -> bool:
    before = element.rect
    time.sleep(0.3)
    return element.rect == before


def _rows(driver):
    return driver.find_elements("xpath", "//nav//table/tbody/tr")


PNG = "//img[starts-with(@src, 'data:image/png')]"


def _loaded(driver, image) -> bool:
    """The image is decoded and has a width: a person sees it."""
    return bool(driver.execute_script("return arguments[0].complete && arguments[0].naturalWidth", image))


def _view(driver, row) -> None:
    """Click the eye button of one result's row: the report shows that result."""
    from selenium.webdriver.support.ui import WebDriverWait

    button = row.find_element("xpath", ".//div[@role='group']/a[1]")
    WebDriverWait(driver, 60).until(lambda d: _standing_still(button))
    button.click()


def test_report_in_a_browser(browser, report_html, tmp_path):
    shots = Path(os.environ.get("LENEX_REPORT_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    try:
        _walk_report(browser, report_html, shots)
    except Exception:
        browser.save_screenshot(str(shots / "report-failure.png"))
        raise
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def _walk_report(browser, report_html: Path, shots: Path) -> None:
    """Each paper: its tables (every title listed, each opening as an HTML table), a figure."""
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    for paper in PAPERS:
        # Each paper from the report's home page, as a person opening the file would start.
        browser.get(report_html.as_uri())
        wait.until(lambda d: "RESULTS" in d.find_element("tag name", "nav").text)
        browser.save_screenshot(str(shots / "report-home.png"))
        spec = experiment(paper)
        _click(browser, spec["title"])
        _click(browser, "Tables")
        wait.until(lambda d: len(_rows(d)) == len(spec["tables"]))
        listed = browser.find_element("tag name", "nav").text
        for table in spec["tables"].values():
            assert table["title"] in listed, f"{paper}: table {table['title']!r} not listed"
        for index in range(len(spec["tables"])):
            _view(browser, _rows(browser)[index])
            frame = wait.until(lambda d: d.find_element("tag name", "iframe"))
            browser.switch_to.frame(frame)
            shown = wait.until(lambda d: d.find_element("tag name", "h1")).text
            assert browser.find_elements("tag name", "table"), f"{paper}: {shown!r} shows no table"
            assert "paper / ours / Δ" in browser.find_element("tag name", "body").text
            browser.switch_to.default_content()
            assert shown in listed, f"{paper}: opened {shown!r}, not a listed table"
        browser.save_screenshot(str(shots / f"report-{paper}-table.png"))
        _click(browser, spec["title"], "//nav//ol//a")  # the breadcrumb back to the paper
        _click(browser, "Figures")
        wait.until(lambda d: _rows(d))
        _view(browser, _rows(browser)[0])
        image = wait.until(lambda d: d.find_element("xpath", PNG))
        wait.until(lambda d: _loaded(d, image))
        browser.save_screenshot(str(shots / f"report-{paper}-figure.png"))
    if "Datasets" in embedded(report_html.read_text(encoding="utf-8"), "categories"):
        browser.get(report_html.as_uri())
        _click(browser, "Datasets")  # its one subcategory opens at once: the cards
        wait.until(lambda d: _rows(d))
        _view(browser, _rows(browser)[0])
        browser.switch_to.frame(wait.until(lambda d: d.find_element("tag name", "iframe")))
        assert browser.find_element("tag name", "h1").text.startswith("Dataset card")
        plot = browser.find_element("xpath", PNG)
        wait.until(lambda d: _loaded(d, plot))
        browser.switch_to.default_content()
        browser.save_screenshot(str(shots / "report-dataset-card.png"))


@pytest.mark.skipif(not GIVEN_REPORT, reason="needs the report of a run made here (LENEX_REPORT_HTML)")
def test_report_shows_runtimes(browser, report_html, tmp_path):
    """Snakemake's metadata of the run gives every job's runtime (Statistics)."""
    html = report_html.read_text(encoding="utf-8")
    runtimes = embedded(html, "runtimes_spec", "runtimes")["data"]["values"]
    rules = {entry["rule"] for entry in runtimes}
    assert {"train", "paper_table"} <= rules and any(r.startswith("lex_eval__tiny_") for r in rules), sorted(rules)
    # A zero runtime (a job inside one tick of the file clock) collapses the log-scale chart.
    zero = [entry for entry in runtimes if entry["runtime"] <= 0]
    assert not zero, zero
    browser.get(report_html.as_uri())
    _click(browser, "Statistics")
    from selenium.webdriver.support.ui import WebDriverWait

    charts = ".vega-embed canvas, .vega-embed svg"
    WebDriverWait(browser, 60).until(lambda d: d.find_elements("css selector", charts))
    shots = Path(os.environ.get("LENEX_REPORT_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(shots / "report-statistics.png"))
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert not errors, errors


def test_claims_pages_join_the_report_once_they_exist(tmp_path):
    """A claims page (from the claims rule) is rendered and listed without any other change."""
    from test_workflow import scratch_workflow, snakemake

    work = scratch_workflow(tmp_path)
    (work / "envs").symlink_to(ROOT / "envs")
    claims = work / "results" / "tiny" / "claims" / "lex.md"
    claims.parent.mkdir(parents=True)
    claims.write_text("# Claims of the LEX paper at preset tiny\n\n- xPos extrapolates: holds\n")
    run = snakemake("results/tiny/report/contents.txt", "--cores", "1",
                    "--allowed-rules", "report_claims", "report_contents", cwd=work)
    assert run.returncode == 0, run.stderr[-3000:]
    page = work / "results" / "tiny" / "report" / "claims" / "lex.html"
    assert "<h1>Claims of the LEX paper at preset tiny</h1>" in page.read_text(encoding="utf-8")
    contents = (work / "results" / "tiny" / "report" / "contents.txt").read_text().split()
    assert contents == ["results/tiny/report/claims/lex.html"]
    report = work / "report.html"
    # The report's DAG as the first run's: the claims job's own inputs (tables, Figure 2's cells) are
    # not in this scratch workflow, and their report-marked figures would be required to exist.
    run = snakemake("results/tiny/report/contents.txt", "--report", str(report),
                    "--allowed-rules", "report_claims", "report_contents", cwd=work)
    assert run.returncode == 0, run.stderr[-3000:]
    categories = embedded(report.read_text(encoding="utf-8"), "categories")
    assert categories == {experiment("lex")["title"]: {"Claims": ["results/tiny/report/claims/lex.html"]}}
