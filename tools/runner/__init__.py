"""The test runner (testrun.py, make test): the boot manifest
(manifest.py), the verdict on a boot (verdicts.py, over ktap.py's parser),
scripted interactive boots (session.py, reading screenshots with
screen.py) and the fuzzers' short runs (fuzz.py). Above results/."""
