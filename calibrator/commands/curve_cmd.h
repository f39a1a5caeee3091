/* `calibrate peak`: peak, knee and shape of measured throughput-versus-
 * batch curves read from CSV (see curve_csv.h), as a table or as JSON of
 * schema "calibrate-peak/1" (curve_json.h, which also declares
 * cal_curve_json for the batch sweep). */
#ifndef CAL_CURVE_CMD_H
#define CAL_CURVE_CMD_H

#include "curve_json.h"

#endif
