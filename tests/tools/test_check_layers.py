"""Self-test of tools/check_layers.py: a small tree with one include of
each kind, allowed and forbidden, must give exactly the forbidden ones.

Run by `tools/check_layers.py --ktap` (the "host: test_layers" line of
make test), or alone: python3 -m unittest tests/tools/test_check_layers.py
"""
import contextlib
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import check_layers  # noqa: E402


class LayerCheck(unittest.TestCase):
    def setUp(self):
        self.root = tempfile.mkdtemp(prefix="layers-")
        # Headers every test can point at.
        for h in ("lib/compiler.h", "mm/vm.h", "arch/x86_64/cpu.h",
                  "arch/ia64/purge.h", "kernel/options.h",
                  "workloads/ramfs.h", "experiments/memtype.h",
                  "trace/tracepoint.h", "trace/buffer.h", "boot/boot.inc"):
            self.write(h, "")

    def tearDown(self):
        shutil.rmtree(self.root)

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def found(self):
        return [(src, n, target) for src, n, target, _ in
                check_layers.check(self.root)]

    def test_clean_tree_passes(self):
        self.write("mm/buddy.c", '#include "lib/compiler.h"\n'
                   '#include "mm/vm.h"\n#include <stdint.h>\n')
        self.write("arch/x86_64/paging.c", '#include "mm/vm.h"\n'
                   '#include "arch/x86_64/cpu.h"\n')
        self.write("kernel/main.c", '#include "arch/x86_64/cpu.h"\n'
                   '#include "mm/vm.h"\n#include "kernel/options.h"\n')
        self.write("experiments/copy.c", '#include "workloads/ramfs.h"\n'
                   '#include "kernel/options.h"\n')
        self.write("tests/kernel/test_x.c",
                   '#include "experiments/memtype.h"\n')
        self.write("boot/entry.asm", '%include "boot/boot.inc"\n')
        self.assertEqual(self.found(), [])

    def test_portable_mm_includes_no_arch_header(self):
        self.write("mm/buddy.c", '#include "lib/compiler.h"\n'
                   '#include "arch/x86_64/cpu.h"\n')
        self.assertEqual(self.found(),
                         [("mm/buddy.c", 2, "arch/x86_64/cpu.h")])

    def test_mm_arch_glue_may(self):
        self.write("mm/kernel_map.c", '#include "arch/x86_64/cpu.h"\n')
        self.assertEqual(self.found(), [])

    def test_nothing_below_kernel_includes_kernel(self):
        self.write("arch/x86_64/smp.c", '#include "kernel/options.h"\n')
        self.write("mm/page_alloc.c", '#include "kernel/options.h"\n')
        self.write("lib/bench.c", '#include "kernel/options.h"\n')
        self.assertEqual(sorted(self.found()), [
            ("arch/x86_64/smp.c", 1, "kernel/options.h"),
            ("lib/bench.c", 1, "kernel/options.h"),
            ("mm/page_alloc.c", 1, "kernel/options.h"),
        ])

    def test_nothing_below_experiments_includes_them(self):
        self.write("kernel/bench_env.c", '#include "experiments/memtype.h"\n')
        self.write("workloads/tbench.c", '#include "experiments/memtype.h"\n')
        self.assertEqual(sorted(self.found()), [
            ("kernel/bench_env.c", 1, "experiments/memtype.h"),
            ("workloads/tbench.c", 1, "experiments/memtype.h"),
        ])

    def test_lib_includes_only_lib(self):
        self.write("lib/stats.c", '#include "mm/vm.h"\n')
        self.assertEqual(self.found(), [("lib/stats.c", 1, "mm/vm.h")])

    def test_ia64_model_is_portable(self):
        self.write("arch/ia64/purge.c", '#include "arch/ia64/purge.h"\n'
                   '#include "arch/x86_64/cpu.h"\n')
        self.assertEqual(self.found(),
                         [("arch/ia64/purge.c", 2, "arch/x86_64/cpu.h")])

    def test_tracepoint_header_is_the_one_downward_include(self):
        self.write("mm/kmalloc.c", '#include "trace/tracepoint.h"\n'
                   '#include "trace/buffer.h"\n')
        self.assertEqual(self.found(),
                         [("mm/kmalloc.c", 2, "trace/buffer.h")])

    def test_tracepoint_header_itself_stays_at_the_bottom(self):
        self.write("trace/tracepoint.h", '#include "lib/compiler.h"\n'
                   '#include "kernel/options.h"\n')
        self.assertEqual(self.found(),
                         [("trace/tracepoint.h", 2, "kernel/options.h")])

    def test_relative_include_resolves_like_the_compiler(self):
        # "options.h" from kernel/ is kernel/options.h; from lib/ it is
        # not found there and the root has none: not the rule's business.
        self.write("kernel/x.c", '#include "options.h"\n')
        self.write("lib/y.c", '#include "../kernel/options.h"\n')
        self.assertEqual(self.found(), [("lib/y.c", 1, "kernel/options.h")])

    def test_nasm_include_is_checked(self):
        self.write("boot/entry.asm", '%include "kernel/options.h"\n')
        self.assertEqual(self.found(),
                         [("boot/entry.asm", 1, "kernel/options.h")])

    def test_report_names_file_and_line(self):
        import io
        self.write("mm/buddy.c", '\n\n#include "arch/x86_64/cpu.h"\n')
        out = io.StringIO()
        check_layers.report(check_layers.check(self.root), out)
        self.assertIn("mm/buddy.c:3: includes arch/x86_64/cpu.h",
                      out.getvalue())
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            self.assertEqual(check_layers.main([self.root]), 1)
        self.assertIn("mm/buddy.c:3:", printed.getvalue())


if __name__ == "__main__":
    unittest.main()
