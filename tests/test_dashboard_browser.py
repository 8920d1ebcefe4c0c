"""The dashboard in a real browser: ``duckmine dashboard`` serves the sample
database, headless Chromium (driven by Selenium) opens the page, fits a C4.5 tree
on the weather data and finds the tree's picture and J48's text on the page. A
screenshot is left in tests/artifacts/.

It runs where Chromium and its driver are installed (``.ci/run`` installs them);
on CI their absence is a failure, not a skip."""

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from duckmine.extension.loader import connect
from duckmine.extension.samples import create_sample_tables

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
ARTIFACTS = Path(__file__).parent / "artifacts"

if not (CHROMIUM and DRIVER) and not os.environ.get("CI"):
    pytest.skip("needs chromium and chromedriver", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")
By = pytest.importorskip("selenium.webdriver.common.by").By
WebDriverWait = pytest.importorskip("selenium.webdriver.support.ui").WebDriverWait


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    assert CHROMIUM and DRIVER, "CI installs chromium and chromium-driver (.ci/run)"
    db = str(tmp_path_factory.mktemp("browser") / "demo.duckdb")
    con = connect(db)
    create_sample_tables(con)
    # compile the page's kernels here (kept on disk for the server): on a cold cache
    # that takes minutes, which the browser should not wait out
    con.execute("SELECT * FROM cross_validate('c45', 'weather', 'play')").fetchall()
    con.close()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "duckmine", "dashboard", "--db", db,
                             "--port", str(port)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read() == b"ok":
                        break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise AssertionError(proc.stdout.read().decode()) from None
                time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        finally:  # the Streamlit server it started was seen to outlive SIGTERM
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(DRIVER), options=options)
    yield driver
    driver.quit()


def test_fit_a_tree_in_the_browser(server, browser):
    browser.get(f"{server}/?table=weather&learner=c45&target=play")
    wait = WebDriverWait(browser, 300)
    # found and clicked in one script: the page is redrawn while it loads, and an
    # element found a moment before may be gone
    click = ("const b = Array.from(document.querySelectorAll('button'))"
             ".find(b => b.innerText.trim() === 'Fit'); if (b) b.click(); return !!b;")
    wait.until(lambda d: d.execute_script(click))
    read = ("return Array.from(document.querySelectorAll('.duckmine-model svg g.node'))"
            ".map(g => [g.querySelector('title').textContent, "
            "g.querySelector('text').textContent])")
    try:  # the page is drawn in steps: read it whole once the tree and the text are in
        wait.until(lambda d: "J48 pruned tree" in d.find_element(By.TAG_NAME, "body").text
                   and len(d.execute_script(read)) == 8)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "canvas, .vega-embed"))
    finally:
        ARTIFACTS.mkdir(exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "dashboard.png"))
    nodes = dict(browser.execute_script(read))
    assert sorted(nodes) == [f"N{i}" for i in range(8)]
    assert {"outlook", "humidity", "windy", "yes (4.0)"} <= set(nodes.values())
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "outlook = sunny" in text and "fit('c45', 'weather', 'play')" in text
