#define ATTUNE_SOFTMAX_ROW_NAME SoftmaxRowPortable
#include "ops/reduce/softmax_row_impl.h"
