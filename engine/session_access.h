// Reaches the SessionImpl behind a public Session, for the CLI and tests; not installed.
#pragma once

#include "attune/session.h"
#include "engine/session_impl.h"

namespace attune {

/// The one friend of Session: internal code gets the implementation through it.
class SessionAccess {
 public:
  static const SessionImpl& Impl(const Session& session) { return *session.impl_; }
};

/// The implementation behind `session` (graph, plan, model summary).
inline const SessionImpl& GetSessionImpl(const Session& session) { return SessionAccess::Impl(session); }

}  // namespace attune
