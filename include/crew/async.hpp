// <crew/async.hpp> -- coroutine tasks on crew's workers (docs/ASYNC.md).
#pragma once

#include "crew/async/join_handle.hpp"
#include "crew/async/task.hpp"
