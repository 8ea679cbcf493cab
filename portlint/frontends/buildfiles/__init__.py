"""Build files and dependency lists: CMake, Makefiles and shell lines calling nvcc,
requirements files, pyproject.toml / setup.cfg / setup.py, Dockerfiles.

Each module reads one kind of file into plain records (a command with its arguments, a
requirement with its line) that the `build` detectors judge. Nothing here executes or
imports the scanned project: setup.py is read with `ast`, TOML with `tomllib`."""
