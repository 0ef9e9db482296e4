# ... existing code ...
    def total_value(self) -> float:
        """Value of everything in stock, rounded to cents."""
        return round(sum(i.price * i.quantity for i in self.items.values()), 2)

    def low_stock(self, threshold: int = 5) -> list[str]:
        return [i.name for i in self.items.values() if i.quantity < threshold]

    def remove(self, name: str) -> None:
# ... existing code ...
