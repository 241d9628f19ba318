"""The documentation site: it builds offline with warnings as errors (a broken link fails it), its generated
component reference lists what ``distrain list`` prints with the same arguments, every registered component
has a docstring, and in Chromium (Debian's, through Playwright, as tests/serving/test_serve_demo_page.py drives it)
its search finds a component by name and its navigation reaches every tutorial."""

from __future__ import annotations

import functools
import html
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from support.cli import run_cli
from support.docs import tutorial_pages
from support.paths import ROOT

CHROMIUM = Path("/usr/bin/chromium")
BUILD = [sys.executable, "-m", "mkdocs", "build", "--strict"]


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    """The README's build command, run in ``root`` (a checkout), writing the site to ``site``."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT / "src"), NO_MKDOCS_2_WARNING="1", HF_HUB_OFFLINE="1")
    return subprocess.run([*BUILD, "--site-dir", str(site)], cwd=root, env=environment, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("site") / "site"
    result = build(ROOT, folder)
    assert result.returncode == 0, result.stderr[-5000:]
    assert "WARNING" not in result.stderr, result.stderr[-5000:]
    return folder


def test_the_site_builds_strictly_with_the_generated_reference(site):
    for page in ("index.html", "reference/components/index.html", "reference/cli/index.html",
                 "reference/config/index.html", "reference/api/index.html", "reference/distrain.schema.json",
                 "search/search_index.json", *(f"tutorials/{page.stem}/index.html" for page in tutorial_pages())):
        assert (site / page).is_file(), page
    assert not (ROOT / "docs" / "reference" / "components.md").exists(), "generated pages live only in the build"
    cli = (site / "reference" / "cli" / "index.html").read_text()
    for command in ("train", "check", "evaluate", "predict", "export", "list", "serve", "tune", "cache-prune"):
        assert f'id="distrain-{command}"' in cli, command


def test_a_broken_link_fails_the_build(tmp_path):
    """The same configuration on a copy of docs/ with one link to a page that does not exist."""
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(ROOT / "mkdocs.yml", tmp_path / "mkdocs.yml")
    for name in ("src", "configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    with open(tmp_path / "docs" / "index.md", "a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    result = build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "contains a link 'no-such-page.md', but the target is not found" in output, output[-3000:]
    assert "Aborted with 1 warnings in strict mode" in output, output[-3000:]


# ------------------------------------------------------------------------------------- docstrings
def reference_hook():
    sys.path.insert(0, str(ROOT / "docs" / "hooks"))
    try:
        import reference
    finally:
        sys.path.remove(str(ROOT / "docs" / "hooks"))
    return reference


def test_every_registered_component_has_a_docstring_of_its_own():
    from distrain.plugins import import_plugins

    import_plugins([])
    # components other tests of this process registered (test_registry's widgets) are not distrain's
    assert [name for name in reference_hook().undocumented_components() if "(distrain." in name] == []


def test_a_component_registered_without_a_docstring_fails_the_build(caplog):
    """The hook warns (so ``mkdocs build --strict`` aborts) and names the class."""
    from distrain.metrics.metric import Metric
    from distrain.plugins import import_plugins

    import_plugins([])

    @Metric.register("undocumented_probe")
    class UndocumentedProbe(Metric):
        def __call__(self, *args, **kwargs):
            pass

    try:
        hook = reference_hook()
        assert [name for name in hook.undocumented_components() if "undocumented_probe" in name] == [
            f"Metric.undocumented_probe ({__name__}.{UndocumentedProbe.__qualname__})"]
        with caplog.at_level("WARNING", logger="mkdocs.plugins.distrain_reference"):
            hook.warn_undocumented()
        assert [record.levelname for record in caplog.records if "undocumented_probe" in record.message] == ["WARNING"]
    finally:
        Metric._registry().pop("undocumented_probe")


# --------------------------------------------------------------------------- the component reference
class ComponentPage(HTMLParser):
    """``{heading id: [table rows as lists of cell texts]}`` of the generated components page."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[list[str]]] = {}
        self.current: str | None = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag in ("h2", "h3") and attributes.get("id"):
            self.current = attributes["id"]
            self.sections[self.current] = []
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(html.unescape("".join(self.cell)).strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            if self.current and self.row and self.row[0] != "argument":
                self.sections[self.current].append(self.row)
            self.row = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)


def listed_by_distrain_list() -> dict[tuple[str, str], list[str]]:
    """``{(base, name): [argument lines]}`` as ``distrain list`` prints them."""
    result = run_cli("list")
    assert result.returncode == 0, result.stderr
    found: dict[tuple[str, str], list[str]] = {}
    base = component = None
    for line in result.stdout.splitlines():
        if not line.startswith(" "):
            base = line.split(" (default")[0].strip()
        elif not line.startswith("      "):
            component = (base, line.strip().split("  - ")[0])
            found[component] = []
        else:
            found[component].append(line.strip())
    return found


def test_the_component_reference_lists_every_name_distrain_list_prints_with_the_same_arguments(site):
    page = ComponentPage()
    page.feed((site / "reference" / "components" / "index.html").read_text())
    listed = listed_by_distrain_list()
    assert len(listed) > 100
    for (base, name), arguments in listed.items():
        anchor = f"{base}-{name}".lower()
        assert anchor in page.sections, f"{base} {name} is missing from the reference"
        rows = page.sections[anchor]
        shown = [f"{argument}: {kind} (" + ("required" if default == "required" else f"default {default}") + ")"
                 + (f", {rules}" if rules else "") for argument, kind, default, rules in rows]
        assert shown == arguments, f"{base} {name}"
    assert {base.lower() for base, _ in listed} <= set(page.sections), "a section per base class"


# ------------------------------------------------------------------------------------------- Chromium
@pytest.fixture(scope="module")
def served_site(site):
    """The built site over HTTP (the search index is fetched by a web worker, which file:// forbids)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/setup.sh --tests as root (apt-get install chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()


def test_the_search_finds_a_component_by_name(served_site, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(served_site + "/")
    found = page.locator('.md-search-result a[href*="reference/components/"][href$="#gradientcompression-powersgd"]')
    for attempt in range(6):  # the index loads in a web worker: on a busy machine, the first keystrokes may come first
        page.fill("input.md-search__input", "")
        page.type("input.md-search__input", "powersgd")
        try:
            found.first.wait_for(timeout=15_000)
            break
        except PlaywrightTimeout:
            assert attempt < 5, "the search found no powersgd section in the component reference"
    found.first.click()
    page.wait_for_url("**/reference/components/**")
    assert page.locator("#gradientcompression-powersgd").is_visible()
    page.close()


def test_the_navigation_reaches_every_tutorial(served_site, browser):
    navigation = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    tutorials = next(entry["Tutorials"] for entry in navigation["nav"] if isinstance(entry, dict) and "Tutorials" in entry)
    titles = {title: path for item in tutorials if isinstance(item, dict) for title, path in item.items()}
    assert sorted(Path(path).stem for path in titles.values()) == sorted(page.stem for page in tutorial_pages())
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(served_site + "/")
    for title, path in titles.items():  # from the home page, then from each tutorial to the next
        page.locator(".md-sidebar--primary").get_by_role("link", name=title, exact=True).click()
        page.wait_for_url(f"**/{path.removesuffix('.md')}/")
        heading = (ROOT / "docs" / path).read_text().split("\n", 1)[0].removeprefix("# ")
        assert page.locator("article h1").inner_text().replace("¶", "").strip() == heading.replace("`", "")
    page.close()
