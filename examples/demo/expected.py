"""A tiny inventory service used by `make demo`."""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float
    quantity: int = 0


class Inventory:
    def __init__(self):
        self.items: dict[str, Item] = {}

    def add(self, item: Item) -> None:
        self.items[item.name] = item

    def total_value(self) -> float:
        """Value of everything in stock, rounded to cents."""
        return round(sum(i.price * i.quantity for i in self.items.values()), 2)

    def low_stock(self, threshold: int = 5) -> list[str]:
        return [i.name for i in self.items.values() if i.quantity < threshold]

    def remove(self, name: str) -> None:
        del self.items[name]


def main():
    inv = Inventory()
    inv.add(Item("apple", 0.5, 10))
    print(inv.total_value())


if __name__ == "__main__":
    main()
