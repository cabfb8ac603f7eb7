"""Prints the Python packages a development environment needs, one per line:
the build requirements, the runtime dependencies and the `test` and `dev`
extras, all read from pyproject.toml so the list lives in one place."""

import pathlib
import sys
import tomllib

root = pathlib.Path(__file__).resolve().parent.parent
project = tomllib.loads((root / "pyproject.toml").read_text())
extras = sys.argv[1:] or ["test", "dev"]
requirements = list(project["build-system"]["requires"])
requirements += project["project"].get("dependencies", [])
for extra in extras:
    requirements += project["project"]["optional-dependencies"][extra]
print("\n".join(dict.fromkeys(requirements)))
