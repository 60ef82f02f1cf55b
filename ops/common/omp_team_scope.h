// Sets the calling thread's OpenMP team size for one scope and restores the
// caller's setting afterwards, so a call leaves the thread as it found it.
#pragma once

#include <omp.h>

namespace attune {

class OmpTeamScope {
 public:
  /// threads <= 0 keeps the current setting.
  explicit OmpTeamScope(int threads) : saved_(omp_get_max_threads()), changed_(threads > 0 && threads != saved_) {
    if (changed_) omp_set_num_threads(threads);
  }
  ~OmpTeamScope() {
    if (changed_) omp_set_num_threads(saved_);
  }
  OmpTeamScope(const OmpTeamScope&) = delete;
  OmpTeamScope& operator=(const OmpTeamScope&) = delete;

 private:
  int saved_;
  bool changed_;
};

}  // namespace attune
