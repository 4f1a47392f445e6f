#include "recurrent.h"
