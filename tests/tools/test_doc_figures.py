"""Tests of tools/checks/doc_figures.py (run by `python3 -m
tools.checks.doc_figures --ktap`, the test_docs host test of make test): on
a small made-up tree, a good provenance line passes and each kind of stale
name is reported; lines in code blocks are examples, not provenance.
Python 3 standard library only.
"""

import os
import subprocess
import tempfile
import unittest

from tools.checks import doc_figures

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

FILES = {
    "Makefile": "MODEL ?=\nKCMDLINE ?= run=default\nrun: iso\n"
                "iso: $(KERNEL)\n.PHONY: run\nhost-bench: x\n",
    "kernel/options.c": '\tKOPT("run", OPT_STRING, run, NULL, 0, 0,\n'
                        '\tKOPT("shell", OPT_FLAG, shell, NULL, 0, 0,\n',
    "kernel/shell/shell_table.c": '\t[SHELL_CMD_RUN] = {"run", "run NAME",\n',
    "cachemodel/profiles.txt": "[core2-2007]\nl1d = 32768\n",
    "experiments/copy.c":
        "static const struct experiment_param copy_params[] = {\n"
        '\t{"size", 1, 2, "bytes"},\n\t{"reps", 1, 9, "n"},\n};\n'
        'EXPERIMENT_PARAMS(copy, "copy",\n\t"copies", "001", 20,\n'
        "\tcopy_run, copy_params);\n",
    "experiments/cal.c": 'EXPERIMENT(cal, "cal", "x", "-", 0, cal_run);\n'
                         'OPTION_UINT(cal_n, "cal", "cal.n", cal_n, 1, 1, 9,'
                         '\n\t"n");\n',
    "tools/model/model.py": 'sub.add_parser("tracing")\n'
                            'ap.add_argument("--model")\n',
    "tests/host/bench_pagecache.c": "int main(void) { return 0; }\n",
}
P = "[Provenance](README.md#figures-in-the-docs): commit `0123456789ab`; "


class DocFiguresTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        for rel, text in FILES.items():
            os.makedirs(os.path.join(self.root, os.path.dirname(rel)),
                        exist_ok=True)
            with open(os.path.join(self.root, rel), "w") as f:
                f.write(text)
        os.makedirs(os.path.join(self.root, "docs"))

    def tearDown(self):
        self.dir.cleanup()

    def problems(self, *lines):
        with open(os.path.join(self.root, "docs", "a.md"), "w") as f:
            f.write("| a |\n|---|\n| 1 |\n\n" + "\n".join(lines) + "\n")
        probs, count, _ = doc_figures.check(self.root)
        return probs, count

    def test_good_line_passes(self):
        probs, count = self.problems(
            P + '`make run MODEL=core2-2007 KCMDLINE="shell run=copy,cal '
            'cal.n=2"`,'
            ' then `run copy size=4096 reps=3 full`; '
            '`python3 -m tools.model.model tracing LOG --model x`; '
            '`build/host/bench_pagecache 2`; '
            '`make host-bench`; `objdump -d build/kernel.elf`.')
        self.assertEqual(probs, [])
        self.assertEqual(count, 1)

    def test_each_stale_name_is_reported(self):
        cases = [
            ("`make runn`", "make target runn does not exist"),
            ("`make run SMPP=2`", "make variable SMPP"),
            ("`make run MODEL=p4-2001`", "no such profile"),
            ('`make run KCMDLINE="run=copy bogus=1"`',
             "kernel option 'bogus'"),
            ('`make run KCMDLINE="run=copyy"`', "no experiment 'copyy'"),
            ("`run copyy`", "no experiment 'copyy'"),
            ("`run copy sise=1`", "no setting 'sise'"),
            ("`run cal reps=1`", "no setting 'reps'"),
            ("`frob 1`", "neither a shell command"),
            ("`python3 -m tools.model.model trace LOG`",
             "no subcommand trace"),
            ("`python3 -m tools.model.model tracing --mode x`",
             "no option --mode"),
            ("`python3 -m tools.model.nosuch`", "no tool"),
            ("`python3 tools/model/model.py tracing LOG`",
             "tools run as modules"),
            ("`build/host/bench_nothing`", "no source"),
            ('`make run KCMDLINE="run=copy`', "does not parse"),
        ]
        for cmd, want in cases:
            probs, _ = self.problems(P + cmd + ".")
            self.assertEqual(len(probs), 1, (cmd, probs))
            self.assertIn(want, probs[0], cmd)

    def test_commit_and_command_required(self):
        probs, _ = self.problems(
            "[Provenance](README.md#figures-in-the-docs): `make run`.")
        self.assertIn("names no commit", probs[0])
        probs, _ = self.problems(P + "by hand.")
        self.assertIn("names no command", probs[0])

    def test_code_block_lines_are_examples(self):
        _, count = self.problems("```", P + "`make runn`.", "```")
        self.assertEqual(count, 0)

    def test_commits_are_looked_up(self):
        if doc_figures.git_has(ROOT, "HEAD") is None:
            self.skipTest("no git repository here")
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"],
                              stdout=subprocess.PIPE).stdout.decode().strip()
        self.assertTrue(doc_figures.git_has(ROOT, head[:12]))
        self.assertFalse(doc_figures.git_has(ROOT, "0123456789ab"))


if __name__ == "__main__":
    unittest.main()
