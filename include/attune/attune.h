// Attune's public API in one include.
#pragma once

#include "attune/element_type.h"
#include "attune/fusion_report.h"
#include "attune/generator.h"
#include "attune/session.h"
#include "attune/tensor.h"
#include "attune/tokenizer.h"
