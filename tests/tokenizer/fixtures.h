// The tokenizer fixtures: tests/tokenizer/fixtures/<family>/ holds the
// tokenizer file (xz-compressed when large) and expected.json, the ids the
// reference tokenizers gave for the corpus (gen/make_fixtures.mjs).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "nlohmann/json.hpp"
#include "tests/common/paths.h"

namespace attune::tokenizer_test {

inline std::string FixtureDir(const std::string& family) {
  return attune::testing::SourceDir() + "/tests/tokenizer/fixtures/" + family;
}

/// The path of <family>'s tokenizer.json, decompressed into the build folder
/// once when the fixture is stored as tokenizer.json.xz. Empty on failure.
inline std::string FixtureTokenizerJson(const std::string& family) {
  namespace fs = std::filesystem;
  const std::string plain = FixtureDir(family) + "/tokenizer.json";
  if (fs::exists(plain)) return plain;
  const std::string packed = plain + ".xz";
  const fs::path out_dir = fs::path(attune::testing::BinaryDir()) / "tokenizer_fixtures" / family;
  const fs::path out = out_dir / "tokenizer.json";
  std::error_code ec;
  if (fs::exists(out) && fs::last_write_time(out, ec) >= fs::last_write_time(packed, ec)) return out.string();
  fs::create_directories(out_dir, ec);
  const fs::path partial = out_dir / ("tokenizer.json.partial" + std::to_string(::getpid()));
  const std::string command = "xz -dc '" + packed + "' > '" + partial.string() + "'";
  if (std::system(command.c_str()) != 0) return "";
  fs::rename(partial, out, ec);
  return ec ? "" : out.string();
}

inline nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str(), nullptr, false);
}

}  // namespace attune::tokenizer_test
