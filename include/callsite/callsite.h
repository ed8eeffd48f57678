// callsite/callsite.h — everything a C++ compiler, DSL or JIT can use from callsite: the API
// other extension modules reach through the capsule (api.h), the types it is made of
// (native_frame.h, frame.h) and the binary contract beneath them (abi.h).
#pragma once
#include "callsite/abi.h"
#include "callsite/api.h"
#include "callsite/frame.h"
#include "callsite/native_frame.h"
