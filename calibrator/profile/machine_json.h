/* The profile's "machine" and "blas" objects. */
#ifndef CAL_MACHINE_JSON_H
#define CAL_MACHINE_JSON_H

#include <jansson.h>

#include "machine.h"

/* The "machine" object of the profile (new reference). */
json_t *cal_hwinfo_machine_json(const cal_hwinfo_t *hw);
/* The "blas" object of the profile (new reference). */
json_t *cal_hwinfo_blas_json(const cal_hwinfo_t *hw);

#endif
