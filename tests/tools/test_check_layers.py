"""Self-test of tools/checks/check_layers.py: a small tree with one
dependency of each kind (include, import, upward call, cycle), allowed
and forbidden, must give exactly the forbidden ones.

Run by `python3 -m tools.checks.check_layers --ktap` (the "host:
test_layers" line of make test), or alone from the root:
python3 -m unittest tests/tools/test_check_layers.py
"""
import contextlib
import os
import shutil
import tempfile
import unittest

from tools.checks import check_layers

HERE = os.path.dirname(os.path.abspath(__file__))


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

    def test_no_mm_file_may_include_arch(self):
        # The x86_64 mapping code lives in arch/x86_64/ now: no mm/ file
        # is an exception any more.
        self.write("mm/kernel_map.c", '#include "arch/x86_64/cpu.h"\n')
        self.write("mm/page_alloc.c", '#include "arch/x86_64/cpu.h"\n')
        self.assertEqual(self.found(), [
            ("mm/kernel_map.c", 1, "arch/x86_64/cpu.h"),
            ("mm/page_alloc.c", 1, "arch/x86_64/cpu.h"),
        ])

    def test_asm_headers_are_interfaces_held_to_system_headers(self):
        # lib/ reaches the CPU's instructions through the include path's
        # asm/ headers, which themselves include no file of the tree.
        self.write("arch/x86_64/include/asm/local.h",
                   '#include <stdbool.h>\n#include "lib/compiler.h"\n')
        self.write("lib/atomic.h", '#include "asm/local.h"\n')
        self.write("mm/filemap.c", '#include "asm/local.h"\n')
        self.assertEqual(self.found(), [
            ("arch/x86_64/include/asm/local.h", 2, "lib/compiler.h"),
        ])

    def test_cachemodel_includes_only_its_own_files(self):
        self.write("cachemodel/model.h", "")
        self.write("cachemodel/doorbell.h", '#include "lib/compiler.h"\n')
        self.write("cachemodel/plugin.c", '#include "cachemodel/model.h"\n'
                   '#include "cachemodel/doorbell.h"\n'
                   '#include "lib/compiler.h"\n#include <stdint.h>\n'
                   '#include <lib/compiler.h>\n')
        # The doorbell is shared: the kernel's layers may include it.
        self.write("arch/x86_64/model_doorbell.c",
                   '#include "cachemodel/doorbell.h"\n')
        self.write("experiments/copy.c", '#include "cachemodel/doorbell.h"\n')
        self.assertEqual(sorted(self.found()), [
            ("cachemodel/doorbell.h", 1, "lib/compiler.h"),
            ("cachemodel/plugin.c", 3, "lib/compiler.h"),
            ("cachemodel/plugin.c", 5, "lib/compiler.h"),
        ])

    def test_every_folder_has_a_layer(self):
        self.write("newroom/x.c", '#include "lib/compiler.h"\n')
        self.write("newroom/y.py", "")
        self.write("build/k/version.c", "")  # the build output: skipped
        self.assertEqual(sorted(self.found()), [
            ("newroom/x.c", 0, ""), ("newroom/y.py", 0, "")])

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
        self.write("kernel/bench/bench_env.c", '#include "experiments/memtype.h"\n')
        self.write("workloads/tbench.c", '#include "experiments/memtype.h"\n')
        self.assertEqual(sorted(self.found()), [
            ("kernel/bench/bench_env.c", 1, "experiments/memtype.h"),
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

    def test_python_imports_point_down(self):
        # A module is found by its dotted path from the root (a module,
        # or a package's __init__.py), in every form of import.
        self.write("tools/__init__.py", "")
        self.write("tools/image/__init__.py", "")
        self.write("tools/image/qemu.py", "import os\n")
        self.write("tools/runner/testrun.py",
                   "from tools.image import qemu\n"
                   "from tools.image.qemu import x\n"
                   "def f():\n    import json, tools.image.qemu\n"
                   "from tools.image import (os,\n    qemu)\n")
        self.write("tests/tools/helper.py", "")
        self.write("tests/tools/test_x.py", "import tests.tools.helper\n"
                   "from tools.image import qemu as q  # the launcher\n")
        self.assertEqual(self.found(), [])
        edges = check_layers.import_edges(self.root)
        self.assertEqual(sorted(set(t for _, _, t in edges)), [
            "tests/tools/helper.py", "tools/image/qemu.py"])
        self.assertEqual(len(edges), 6)

    def test_tools_groups_point_down(self):
        # image at the bottom, then model, results, runner; the log's
        # schema (an interface) from any group, importing nothing itself.
        self.write("tools/image/qemu.py",
                   "from tools.results import results\n")
        self.write("tools/model/model.py",
                   "from tools.results import result_log\n"
                   "from tools.results import results\n"
                   "from tools.image import qemu\n")
        self.write("tools/results/result_log.py",
                   "import json\nfrom tools.image import qemu\n")
        self.write("tools/results/results.py", "")
        self.write("tools/runner/testrun.py",
                   "from tools.results import results\n"
                   "from tools.labs import grade\n")
        self.write("tools/labs/grade.py", "from tools.model import model\n")
        self.assertEqual(sorted(self.found()), [
            ("tools/image/qemu.py", 1, "tools/results/results.py"),
            ("tools/model/model.py", 2, "tools/results/results.py"),
            ("tools/results/result_log.py", 2, "tools/image/qemu.py"),
            ("tools/runner/testrun.py", 2, "tools/labs/grade.py"),
        ])

    def test_tool_outside_a_group_is_reported(self):
        self.write("tools/__init__.py", "")
        self.write("tools/helpers.py", "")
        self.write("tools/misc/x.py", "")
        self.assertEqual(self.found(), [
            ("tools/helpers.py", 0, ""), ("tools/misc/x.py", 0, "")])

    def test_sys_path_edit_is_reported(self):
        self.write("tests/tools/test_z.py", "import sys\n"
                   "sys.path.insert(0, 'tools')\n"
                   "x = 'sys.path.append(1)'\n")
        self.write("tools/runner/a.py", "import sys\n"
                   "    sys.path = ['x']\n")
        self.assertEqual(sorted(self.found()), [
            ("tests/tools/test_z.py", 2, ""), ("tools/runner/a.py", 2, "")])

    def test_tools_may_not_import_tests(self):
        self.write("tests/tools/helper.py", "")
        self.write("tools/results/report.py", "import os\n"
                   "from tests.tools.helper import x\n")
        self.assertEqual(self.found(), [
            ("tools/results/report.py", 2, "tests/tools/helper.py")])

    def test_python_file_outside_tools_and_tests_is_reported(self):
        self.write("tools/runner/run.py", "")
        self.write("boot/gen.py", "from tools.runner import run\n")
        self.assertEqual(sorted(self.found()), [
            ("boot/gen.py", 1, "tools/runner/run.py")])

    def test_include_cycle_fails_whatever_its_length(self):
        self.write("kernel/a.h", '#include "kernel/b.h"\n')
        self.write("kernel/b.h", '\n#include "kernel/c.h"\n')
        self.write("kernel/c.h", '#include "kernel/a.h"\n')
        self.write("kernel/self.h", '#include "self.h"\n')
        found = check_layers.check(self.root)
        self.assertEqual([(s, n, t) for s, n, t, _ in found], [
            ("kernel/a.h", 1, "kernel/b.h"),
            ("kernel/self.h", 1, "kernel/self.h"),
        ])
        self.assertEqual(found[0][3], "cycle: kernel/a.h -> kernel/b.h -> "
                         "kernel/c.h -> kernel/a.h")
        self.assertEqual(found[1][3],
                         "cycle: kernel/self.h -> kernel/self.h")

    def test_module_cycle_fails_in_any_folder(self):
        # x.c includes y.h, y.c includes x.h: no file reaches itself, but
        # the two modules need each other. Inside kernel/'s rooms, and the
        # same in arch/ with three modules, the last header including the
        # first's.
        self.write("kernel/bench/x.h", "")
        self.write("kernel/bench/y.h", "")
        self.write("kernel/bench/x.c", '#include "kernel/bench/x.h"\n'
                   '#include "kernel/bench/y.h"\n')
        self.write("kernel/bench/y.c", '#include "kernel/bench/y.h"\n'
                   '#include "kernel/bench/x.h"\n')
        for name, text in (("a.h", ""), ("b.h", ""), ("c.h", "a.h"),
                           ("a.c", "b.h"), ("b.c", "c.h")):
            self.write("arch/x86_64/" + name, text and
                       '#include "arch/x86_64/%s"\n' % text)
        found = check_layers.check(self.root)
        self.assertEqual(found, [
            ("arch/x86_64/a.c", 1, "arch/x86_64/b",
             "module cycle: arch/x86_64/a -> arch/x86_64/b -> "
             "arch/x86_64/c -> arch/x86_64/a"),
            ("kernel/bench/x.c", 2, "kernel/bench/y",
             "module cycle: kernel/bench/x -> kernel/bench/y -> "
             "kernel/bench/x")])

    def test_long_function_fails_outside_tests(self):
        def body(n):
            # A function whose braces are n lines apart, both included.
            return "static int\nf(int a,\n  int b)\n{\n" + \
                "\ta++;\n" * (n - 2) + "}\n"
        self.write("mm/ok.c", "/* at the limit */\n" + body(120))
        self.write("tests/kernel/test_long.c", body(300))
        self.assertEqual(self.found(), [])
        self.write("mm/long.c", "#include <stdint.h>\n\n" + body(121))
        found = check_layers.check(self.root)
        self.assertEqual([(s, n, t) for s, n, t, _ in found],
                         [("mm/long.c", 6, "")])
        self.assertIn("function f() is 121 lines", found[0][3])

    def test_rooms_point_down(self):
        self.write("kernel/shell/shell.h", "")
        self.write("kernel/bench/env.h", "")
        self.write("kernel/shell/cmds.c", '#include "kernel/bench/env.h"\n'
                   '#include "kernel/options.h"\n')
        self.write("kernel/bench/env.c", '#include "kernel/options.h"\n'
                   '#include "kernel/shell/shell.h"\n')
        self.write("kernel/experiment.c", '#include "kernel/bench/env.h"\n')
        # The boot sequence starts every room.
        self.write("kernel/main.c", '#include "kernel/shell/shell.h"\n'
                   '#include "kernel/bench/env.h"\n')
        self.assertEqual(sorted(self.found()), [
            ("kernel/bench/env.c", 2, "kernel/shell/shell.h"),
            ("kernel/experiment.c", 1, "kernel/bench/env.h"),
        ])

    def test_import_cycle_fails(self):
        # Inside one group, so that only the cycle is wrong.
        self.write("tools/results/report.py", "import json\n\ndef f():\n"
                   "    from tools.results import results\n")
        self.write("tools/results/results.py",
                   "import tools.results.report\n")
        found = check_layers.check(self.root)
        self.assertEqual(found, [(
            "tools/results/report.py", 4, "tools/results/results.py",
            "cycle: tools/results/report.py -> tools/results/results.py -> "
            "tools/results/report.py")])

    def test_acyclic_diamond_passes(self):
        self.write("kernel/a.h", '#include "kernel/b.h"\n'
                   '#include "kernel/c.h"\n')
        self.write("kernel/b.h", '#include "kernel/d.h"\n')
        self.write("kernel/c.h", '#include "kernel/d.h"\n')
        self.write("kernel/d.h", "")
        self.assertEqual(self.found(), [])

    def test_upward_call_needs_a_named_interface(self):
        self.write("lib/panic.h", "void panic(const char *fmt, ...);\n")
        self.write("kernel/panic.c", "void panic(const char *fmt, ...)\n"
                   "{\n}\n")
        self.write("mm/vm.h", "#include <stdint.h>\n\n"
                   "int vm_map(uint64_t va,\n\t   uint64_t pa);\n"
                   "void vm_init(void);\n")
        self.write("arch/x86_64/paging.c", "int vm_map(uint64_t va,\n"
                   "\t   uint64_t pa)\n{\n\treturn 0;\n}\n")
        self.assertEqual(self.found(), [])
        # Declared low, defined above, not named: the lower layer calls up.
        self.write("lib/stats.h", "unsigned stats_cpu(void);\n")
        self.write("kernel/smp.c", "unsigned stats_cpu(void)\n{\n}\n"
                   "static void helper(void)\n{\n}\n")
        # Named, but for another implementer.
        self.write("kernel/main.c", "void vm_init(void)\n{\n}\n")
        self.assertEqual(sorted(self.found()), [
            ("lib/stats.h", 1, "kernel/smp.c"),
            ("mm/vm.h", 5, "kernel/main.c"),
        ])

    def test_named_interfaces_exist_in_the_tree(self):
        # The table names files of this repository: none may go stale.
        root = os.path.join(HERE, "..", "..")
        for path in check_layers.INTERFACES:
            self.assertTrue(os.path.isfile(os.path.join(root, path)), path)

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
