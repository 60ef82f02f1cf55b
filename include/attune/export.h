// Marks the symbols that libattune.so exports; everything else stays hidden.
#pragma once

#if defined(ATTUNE_BUILDING_LIBRARY)
#define ATTUNE_API __attribute__((visibility("default")))
#else
#define ATTUNE_API
#endif
