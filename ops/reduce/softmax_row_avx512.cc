#define ATTUNE_SOFTMAX_ROW_NAME SoftmaxRowAvx512
#include "ops/reduce/softmax_row_impl.h"
