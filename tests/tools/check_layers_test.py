"""tools/check_layers.py: the repository has no upward include, and one planted upward include
(a kernel including the trainer) is found by file, line and layers. Run by ctest (label tools)
with the repository root as argument."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(sys.argv.pop(1) if len(sys.argv) > 1 else ".")
CHECK = os.path.join(ROOT, "tools", "check_layers.py")


def run(root):
    return subprocess.run([sys.executable, CHECK, "--root", root], capture_output=True, text=True,
                          timeout=120)


class Layers(unittest.TestCase):
    def test_the_repository_has_no_upward_include(self):
        p = run(ROOT)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_a_planted_upward_include_fails(self):
        tmp = tempfile.mkdtemp()
        try:
            for folder in ("kernels/sample", "pipeline", "runtime/core", "models"):
                os.makedirs(os.path.join(tmp, folder))
            with open(os.path.join(tmp, "pipeline/trainer.hpp"), "w") as f:
                f.write('#include "models/model.hpp"\n#include "runtime/core/error.hpp"\n')
            with open(os.path.join(tmp, "models/model.hpp"), "w") as f:
                f.write('#include "kernels/sample/sample.hpp"\n')
            with open(os.path.join(tmp, "kernels/sample/sample.cu"), "w") as f:
                f.write('// fine\n#include "runtime/core/error.hpp"\n'
                        '#include "pipeline/trainer.hpp"\n')
            p = run(tmp)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            lines = p.stdout.strip().splitlines()
            self.assertEqual(len(lines), 1, lines)
            self.assertIn("kernels/sample/sample.cu:3: layer kernels includes "
                          "pipeline/trainer.hpp of layer pipeline", lines[0])
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    unittest.main()
