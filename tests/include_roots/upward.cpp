// Planted upward include (ctest include_roots_refuse_upward): a file that links only the kernels
// layer includes the trainer, two layers up. Its include roots hold kernels/, runtime/graph/ and
// runtime/core/ only, so this must fail to compile with "No such file or directory".
#include "pipeline/trainer.hpp"

int coopgnn_planted_upward_include() { return 0; }
