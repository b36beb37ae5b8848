// <crew/net.hpp> -- TCP networking for crew coroutine tasks (docs/ASYNC.md, "Networking"):
// crew::net::endpoint, tcp_listener, tcp_stream.
#pragma once

#include "crew/net/endpoint.hpp"
#include "crew/net/tcp.hpp"
