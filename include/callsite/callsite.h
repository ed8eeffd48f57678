// callsite/callsite.h — everything a C++ compiler, DSL or JIT can use from callsite: the API
// other extension modules reach through the capsule (api.h) and the types it is made of.
#pragma once
#include "callsite/api.h"
#include "callsite/frame.h"
#include "callsite/native_frame.h"
