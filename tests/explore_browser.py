"""Helpers for the explorer's page tests (tests/test_explore.py,
tests/test_explore_games.py); the `browser` fixture is in conftest.py."""

from __future__ import annotations

import os
import shutil
import tempfile

from openspiel_cfrx.explore import write_page

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
WAIT_SECONDS = 20  # a loaded machine draws a page in about a second


def console_errors(driver) -> list:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def open_page(driver, url: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.execute_script("return document.readyState") == "complete")


def wait_text(driver, element_id: str, prefix: str) -> None:
    """Waits until the element's text starts with `prefix` (e.g. "Node 7 ")."""
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, WAIT_SECONDS).until(lambda d: d.find_element("id", element_id).text.startswith(prefix))


def wait_node(driver, n: int) -> None:
    wait_text(driver, "nodeinfo", f"Node {n} ")


class PageFile:
    """An explorer's page written to a temporary folder (`path`); `remove()` deletes it."""

    def __init__(self, explorer):
        self.folder = tempfile.mkdtemp(prefix="explore-page-")
        self.path = os.path.join(self.folder, "page.html")
        write_page(explorer, self.path)

    def remove(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
