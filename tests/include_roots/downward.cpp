// The control of include_roots_refuse_upward: the same target shape (linking only the kernels
// layer) including its own layer and the layers below it compiles.
#include "kernels/dispatch.hpp"
#include "runtime/core/error.hpp"
#include "runtime/graph/csc.hpp"

int coopgnn_planted_downward_include() { return 0; }
