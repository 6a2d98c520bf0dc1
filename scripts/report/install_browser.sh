#!/usr/bin/env bash
# The headless browser of the report test (tests/test_snakemake_report.py): Debian's Chromium and
# its chromedriver (about 100 MB, 1-2 min); Selenium drives them, nothing is downloaded by Selenium.
# A package already installed is not fetched again.
#   scripts/report/install_browser.sh
set -euo pipefail
exec bash "$(dirname "$0")/../apt_install.sh" browser chromium chromium-driver
