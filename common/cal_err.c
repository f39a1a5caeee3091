#include "cal_err.h"

const char *cal_strerror(int code) {
  switch (code) {
  case CAL_OK: return "success";
#define CAL_ERR_MSG_(name, c, msg) case CAL_E##name: return msg;
  CAL_ERRNO_MAP(CAL_ERR_MSG_)
#undef CAL_ERR_MSG_
  default: return "unknown error";
  }
}

const char *cal_err_name(int code) {
  switch (code) {
  case CAL_OK: return "CAL_OK";
#define CAL_ERR_NAME_(name, c, msg) case CAL_E##name: return "CAL_E" #name;
  CAL_ERRNO_MAP(CAL_ERR_NAME_)
#undef CAL_ERR_NAME_
  default: return "CAL_E?";
  }
}
