#!/usr/bin/env python3
"""The composite GitHub Action (.github/actions/denpex/action.yml) is well
formed and its shell is sound, without a GitHub runner:

- it parses, is `composite`, and every step that runs shell says `shell: bash`;
- every `${{ inputs.X }}` it reads is a declared input, and every input is read;
- each `run:` block passes shellcheck (GitHub expressions replaced by a word);
- the packages it installs are the build dependencies the Makefile installs;
- its build uses the CMake options this project defines.

    action_test.py SOURCE_DIR

Exit 0 pass, 1 fail, 77 skipped (python3-yaml or shellcheck missing).
"""
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import yaml
except ImportError:
    print("python3-yaml is not installed: skipped")
    sys.exit(77)

src = Path(sys.argv[1])
action = yaml.safe_load((src / ".github/actions/denpex/action.yml").read_text())
problems = []

if action.get("runs", {}).get("using") != "composite":
    problems.append("runs.using is not composite")
steps = action["runs"]["steps"]
declared = set(action.get("inputs", {}))
text = (src / ".github/actions/denpex/action.yml").read_text()
used = set(re.findall(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", text)) | set(re.findall(r"inputs\.([\w-]+)\s*!=", text))
for name in used - declared:
    problems.append(f"input '{name}' is read but not declared")
for name in declared - used:
    problems.append(f"input '{name}' is declared but never read")

shellcheck = shutil.which("shellcheck")
for i, step in enumerate(steps):
    if "run" not in step:
        continue
    if step.get("shell") != "bash":
        problems.append(f"step {i} ({step.get('name')}): composite run steps need shell: bash")
    script = re.sub(r"\$\{\{[^}]*\}\}", "EXPR", step["run"])
    if shellcheck:
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("#!/bin/bash\n" + script)
        r = subprocess.run([shellcheck, "-s", "bash", f.name], capture_output=True, text=True)
        Path(f.name).unlink()
        if r.returncode != 0:
            problems.append(f"step {i} ({step.get('name')}): shellcheck:\n{r.stdout}")

# The action builds the binary: what `make demo` installs (BUILD_PACKAGES and
# its continuation lines), not the test tools.
makefile = (src / "Makefile").read_text().split("TEST_PACKAGES")[0]
make_pkgs = set(re.findall(r"[a-z0-9][a-z0-9.+-]*", " ".join(
    l.split(":=", 1)[-1].split("+=", 1)[-1] for l in makefile.splitlines() if "BUILD_PACKAGES" in l or l.startswith(" "))))
install = next(s["run"] for s in steps if "apt-get install" in s.get("run", ""))
action_pkgs = set(re.search(r'pkgs="([^"]+)"', install).group(1).split()) | {"libhyperscan-dev"}
for p in sorted(action_pkgs - make_pkgs):
    problems.append(f"the action installs {p}, which the Makefile does not")
for p in ("libre2-dev", "libcli11-dev", "libspdlog-dev", "libarchive-dev", "cmake", "ninja-build"):
    if p not in action_pkgs:
        problems.append(f"the action does not install {p}")

cmake = (src / "CMakeLists.txt").read_text()
for opt in set(re.findall(r"-D(DENPEX_\w+)=", text)):
    if f"option({opt}" not in cmake and f"set({opt}" not in cmake:
        problems.append(f"the action sets -D{opt}, which CMakeLists.txt does not define")

if not shellcheck:
    print("shellcheck is not installed: run blocks not checked")
for p in problems:
    print("FAIL:", p)
if problems:
    sys.exit(1)
print(f"action.yml: {len(steps)} steps, {len(declared)} inputs: ok")
sys.exit(0 if shellcheck else 77)
