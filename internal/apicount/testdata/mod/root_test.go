package fixture

func Helper() {}
