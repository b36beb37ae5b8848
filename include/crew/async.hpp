// <crew/async.hpp> -- coroutine tasks on crew's workers (docs/ASYNC.md): task<T>, spawn,
// join_handle, block_on, when_all, when_any, yield_now, schedule_on, cancellation, make_oneshot, sleep_for,
// sleep_until, timeout.
#pragma once

#include "crew/async/async_mutex.hpp"
#include "crew/async/channel.hpp"
#include "crew/async/event.hpp"
#include "crew/async/join_handle.hpp"
#include "crew/async/oneshot.hpp"
#include "crew/async/task.hpp"
#include "crew/async/time.hpp"
#include "crew/async/when_all.hpp"
#include "crew/async/yield.hpp"
