#pragma once
// forwarding header: kept until every user includes core/
#include "core/error.h"
