"""Tests of tools/labs/labs.py (run by `python3 -m tools.labs.labs
--selftest`, and by the test_docs host test of make test): what the check
masks and what it does not, that a refresh rewrites figures too, and that a
command the boot types must be visible on the page.
Python 3 standard library only.
"""

import os
import tempfile
import unittest

from tools.labs import labs

LAB = """# Lab

<!-- shell: info tsc -->
```text
kernel> info tsc
tsc: 2600.572 MHz (source: acpi-pm-timer)
```

<!-- shell-run: memtype wc -->
"""

LOG = """kernel> info tsc
tsc: 2999.001 MHz (source: acpi-pm-timer)
kernel> memtype wc
memtype: 64 KiB now WC
kernel> halt
"""


class LabsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.lab = os.path.join(self.dir.name, "01-x.md")
        self.log = os.path.join(self.dir.name, "run.log")
        with open(self.lab, "w") as f:
            f.write(LAB)
        with open(self.log, "w") as f:
            f.write(LOG)
        self.saved = labs.lab_files
        labs.lab_files = lambda root=None: [self.lab]

    def tearDown(self):
        labs.lab_files = self.saved
        self.dir.cleanup()

    def test_numbers_masked_words_not(self):
        self.assertEqual(labs.mask("tsc: 2600.572 MHz at 0x1f"),
                         labs.mask("tsc: 3.1 MHz at 0xffff"))
        self.assertNotEqual(labs.mask("tsc: 2600 MHz"),
                            labs.mask("tsc: 2600 GHz"))

    def test_noise_marks_masked(self):
        # Whether a figure is noisy follows the host's load, not the code.
        self.assertEqual(labs.mask("memtype  WB  read  MB/s  1.0  2.0  3.0"
                                   "  322.89% NOISY  5"),
                         labs.mask("memtype  WB  read  MB/s  1.0  2.0  3.0"
                                   "   6.54%  5"))
        self.assertEqual(labs.mask('@@RESULT {"cpus":1,"noisy":true,'
                                   '"schema":1}'),
                         labs.mask('@@RESULT {"cpus":1,"schema":1}'))
        self.assertNotEqual(labs.mask("NOISY"), labs.mask(""))
        self.assertEqual(labs.comparable(
            ["note: 3 of 18 figures NOISY: their repetitions ..."]), [])

    def test_walk_accessed_dirty_masked_other_flags_not(self):
        a = "  L2 PD  [254] = 000000001fee9027 P W U A"
        self.assertEqual(labs.mask(a), labs.mask(a[:-2]))
        self.assertEqual(labs.mask("  L1 PT [ 1] = 1 P W S A D G NX"),
                         labs.mask("  L1 PT [ 1] = 1 P W S G NX"))
        self.assertNotEqual(labs.mask("  L1 PT [ 1] = 1 P W S G NX"),
                            labs.mask("  L1 PT [ 1] = 1 P W S G"))
        self.assertNotEqual(labs.mask("mode: A"), labs.mask("mode:"))

    def test_refresh_rewrites_figures(self):
        labs.rewrite(self.log)
        with open(self.lab) as f:
            text = f.read()
        self.assertIn("2999.001 MHz", text)
        self.assertNotIn("2600.572", text)

    def test_hidden_run_only_command_is_a_problem(self):
        self.assertEqual(labs.hidden_commands(self.lab),
                         [(9, "memtype wc")])
        with open(self.lab, "a") as f:
            f.write("\nThen `memtype wc`.\n")
        self.assertEqual(labs.hidden_commands(self.lab), [])

    def test_changed_words_fail_the_comparison(self):
        got = labs.transcripts(LOG)[0][1]
        want = labs.blocks_of(self.lab)[0].lines
        self.assertEqual(labs.comparable(got), labs.comparable(want))
        got = [l.replace("source", "origin") for l in got]
        self.assertNotEqual(labs.comparable(got), labs.comparable(want))


if __name__ == "__main__":
    unittest.main()
