#pragma once
// forwarding header: kept until every user includes core/
#include "core/checks_cuda.h"
