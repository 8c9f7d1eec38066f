KIND = "user protocol"
