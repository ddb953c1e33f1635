#pragma once
// forwarding header: kept until every user includes core/
#include "core/exit_code.h"
