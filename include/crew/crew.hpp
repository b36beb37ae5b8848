// <crew/crew.hpp> -- the umbrella header of crew, a C++20 work-stealing task runtime.
#pragma once

#include "crew/algorithms.hpp"
#include "crew/async.hpp"
#include "crew/combinable.hpp"
#include "crew/errors.hpp"
#include "crew/fork_join.hpp"
#include "crew/future.hpp"
#include "crew/isolate.hpp"
#include "crew/join.hpp"
#include "crew/metrics.hpp"
#include "crew/net.hpp"
#include "crew/pool.hpp"
#include "crew/task_group.hpp"
#include "crew/workspan.hpp"
