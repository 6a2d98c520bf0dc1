#!/usr/bin/env bash
# The headless browser of the report test (tests/test_snakemake_report.py): Debian's Chromium and
# its chromedriver (about 100 MB, 1-2 min); Selenium drives them, nothing is downloaded by Selenium.
# A package already installed is not fetched again.
#   scripts/report/install_browser.sh
set -euo pipefail
packages=(chromium chromium-driver)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[[ ${#missing[@]} == 0 ]] && { echo "browser packages present"; exit 0; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
