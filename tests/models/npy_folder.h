// The .npy files of a folder as named tensors (file stem = tensor name), in name order.
#pragma once

#include <algorithm>
#include <filesystem>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"

namespace attune::testing {

inline NamedTensors ReadNpyFolder(const std::filesystem::path& dir) {
  NamedTensors tensors;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".npy") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& f : files) {
    auto t = ReadNpyFile(f.string());
    EXPECT_TRUE(t.ok()) << t.status();
    if (t.ok()) tensors.emplace_back(f.stem().string(), *t);
  }
  return tensors;
}

}  // namespace attune::testing
