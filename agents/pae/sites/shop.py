"""ShopLite: a small web shop (search, category filter, price sort, product pages, cart).

Content is generated from the seed: ~60 products with brand, price, rating and stock.
The cart lives in a cookie (a comma-separated list of product ids), so each browser
context has its own cart and the server stays stateless.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from agents.pae.sites.base import Site, SiteTask, esc, page, words_match

CATEGORIES: dict[str, tuple[str, ...]] = {
    "kitchen": ("Kettle", "Teapot", "Frying Pan", "Chef Knife", "Cutting Board", "Blender"),
    "garden": ("Watering Can", "Garden Hose", "Pruning Shears", "Flower Pot", "Rake"),
    "toys": ("Puzzle", "Kite", "Yo-Yo", "Toy Train", "Building Blocks"),
    "office": ("Desk Lamp", "Stapler", "Notebook", "Fountain Pen", "Desk Organizer"),
    "outdoor": ("Tent", "Sleeping Bag", "Camping Stove", "Water Bottle", "Backpack"),
}
ADJECTIVES = (
    "Blue",
    "Classic",
    "Compact",
    "Deluxe",
    "Golden",
    "Green",
    "Rustic",
    "Silver",
    "Smart",
    "Vintage",
    "Red",
    "Ultra",
)
BRANDS = ("Acme", "Northwind", "Globex", "Initech", "Umbra", "Vandelay", "Hooli", "Stark")


@dataclass(frozen=True)
class Product:
    id: int
    name: str
    category: str
    brand: str
    price: float
    rating: float
    stock: int

    @property
    def price_text(self) -> str:
        return f"${self.price:.2f}"


def make_products(seed: int) -> list[Product]:
    """The seeded catalogue: every (adjective, item) pair at most once."""
    rng = random.Random(f"shop:{seed}")
    out: list[Product] = []
    pairs = [(a, cat, item) for cat, items in CATEGORIES.items() for item in items for a in ADJECTIVES]
    rng.shuffle(pairs)
    for i, (adj, cat, item) in enumerate(sorted(pairs[:60], key=lambda p: (p[1], p[2], p[0]))):
        out.append(
            Product(
                id=i + 1,
                name=f"{adj} {item}",
                category=cat,
                brand=rng.choice(BRANDS),
                price=round(rng.uniform(4, 180), 0) - 0.01,
                rating=round(rng.uniform(2.5, 5.0), 1),
                stock=rng.randint(0, 40),
            )
        )
    return out


class ShopSite(Site):
    name = "shop"
    title = "ShopLite"
    description = "An online shop: search products, filter by category, sort by price, product pages, a cart."
    demos = (
        "What is the price of the Classic Kettle?",
        "Which brand makes the Green Tent?",
        "Add the Silver Stapler to the cart and tell me the cart total.",
    )

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.products = make_products(seed)
        self.by_id = {p.id: p for p in self.products}

    # --- pages -------------------------------------------------------------
    def _page(self, body: str, title: str = "", query: str = "") -> HTMLResponse:
        return HTMLResponse(
            page(
                self.title,
                "/shop/",
                body,
                title=title,
                search_action="/shop/search",
                search_placeholder="Search products",
                query=query,
            )
        )

    def _listing(self, items: list[Product]) -> str:
        if not items:
            return "<p>No products found.</p>"
        rows = "".join(
            f"<div class='card'><a href='/shop/product/{p.id}'>{esc(p.name)}</a> "
            f"<span>{p.price_text}</span> <span class='muted'>rating {p.rating}</span></div>"
            for p in items
        )
        return rows

    def router(self) -> APIRouter:
        r = APIRouter()

        @r.get("/", response_class=HTMLResponse)
        def home() -> HTMLResponse:
            cats = "".join(f"<li><a href='/shop/category/{c}'>{c.title()}</a></li>" for c in CATEGORIES)
            return self._page(
                f"<h1>Welcome to ShopLite</h1><p>Browse categories:</p><ul>{cats}</ul>"
                "<p><a href='/shop/cart'>View cart</a></p>"
            )

        @r.get("/search", response_class=HTMLResponse)
        def search(q: str = "") -> HTMLResponse:
            q = q[:200]
            hits = [p for p in self.products if words_match(q, f"{p.name} {p.category} {p.brand}")]
            return self._page(
                f"<h2>Results for '{esc(q)}' ({len(hits)})</h2>{self._listing(hits[:20])}", title="Search", query=q
            )

        @r.get("/category/{cat}", response_class=HTMLResponse)
        def category(cat: str, sort: str = "name") -> HTMLResponse:
            items = [p for p in self.products if p.category == cat]
            key = {"price_asc": lambda p: p.price, "price_desc": lambda p: -p.price, "rating": lambda p: -p.rating}.get(
                sort, lambda p: p.name
            )
            items.sort(key=key)
            sorts = (
                f"<p>Sort: <a href='/shop/category/{esc(cat)}?sort=name'>Name</a> | "
                f"<a href='/shop/category/{esc(cat)}?sort=price_asc'>Price: low to high</a> | "
                f"<a href='/shop/category/{esc(cat)}?sort=price_desc'>Price: high to low</a> | "
                f"<a href='/shop/category/{esc(cat)}?sort=rating'>Top rated</a></p>"
            )
            return self._page(f"<h2>{esc(cat.title())}</h2>{sorts}{self._listing(items)}", title=cat.title())

        @r.get("/product/{pid}", response_class=HTMLResponse)
        def product(pid: int) -> HTMLResponse:
            p = self.by_id.get(pid)
            if p is None:
                return self._page("<p>Product not found.</p>")
            stock = f"{p.stock} in stock" if p.stock else "Out of stock"
            return self._page(
                f"<h1>{esc(p.name)}</h1><p>Price: {p.price_text}</p><p>Brand: {esc(p.brand)}</p>"
                f"<p>Customer rating: {p.rating} out of 5</p><p>Category: {esc(p.category)}</p><p>{stock}</p>"
                f"<form action='/shop/cart/add' method='get'><input type='hidden' name='pid' value='{p.id}'>"
                "<button type='submit'>Add to cart</button></form>",
                title=p.name,
            )

        @r.get("/cart/add")
        def cart_add(request: Request, pid: int) -> RedirectResponse:
            ids = [i for i in request.cookies.get("cart", "").split(",") if i.isdigit()][:50]
            if pid in self.by_id:
                ids.append(str(pid))
            resp = RedirectResponse("/shop/cart", status_code=303)
            resp.set_cookie("cart", ",".join(ids), path="/shop")
            return resp

        @r.get("/cart", response_class=HTMLResponse)
        def cart(request: Request) -> HTMLResponse:
            ids = [int(i) for i in request.cookies.get("cart", "").split(",") if i.isdigit()]
            items = [self.by_id[i] for i in ids if i in self.by_id]
            total = sum(p.price for p in items)
            rows = "".join(f"<li>{esc(p.name)} {p.price_text}</li>" for p in items) or "<li>(empty)</li>"
            return self._page(f"<h2>Your cart</h2><ul>{rows}</ul><p>Cart total: ${total:.2f}</p>", title="Cart")

        return r

    # --- tasks ---------------------------------------------------------------
    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:
        out: list[SiteTask] = []
        kinds = ["price", "brand", "rating", "cheapest", "cart"]
        for i in range(n):
            kind = kinds[i % len(kinds)]
            p = rng.choice(self.products)
            search = [("type", "Search products", p.name), ("click", p.name, "")]
            if kind == "price":
                out.append(
                    self.task(
                        f"price-{p.id}",
                        f"What is the price of the {p.name} on ShopLite?",
                        p.price_text,
                        [*search, ("answer", "", p.price_text)],
                        kind,
                    )
                )
            elif kind == "brand":
                out.append(
                    self.task(
                        f"brand-{p.id}",
                        f"Which brand makes the {p.name}?",
                        p.brand,
                        [*search, ("answer", "", p.brand)],
                        kind,
                    )
                )
            elif kind == "rating":
                out.append(
                    self.task(
                        f"rating-{p.id}",
                        f"What is the customer rating of the {p.name}?",
                        str(p.rating),
                        [*search, ("answer", "", str(p.rating))],
                        kind,
                    )
                )
            elif kind == "cheapest":
                cheapest = min((q for q in self.products if q.category == p.category), key=lambda q: q.price)
                out.append(
                    self.task(
                        f"cheapest-{p.category}",
                        f"What is the cheapest product in the {p.category} category?",
                        cheapest.name,
                        [
                            ("click", p.category.title(), ""),
                            ("click", "Price: low to high", ""),
                            ("answer", "", cheapest.name),
                        ],
                        kind,
                    )
                )
            else:
                out.append(
                    self.task(
                        f"cart-{p.id}",
                        f"Add the {p.name} to the cart and tell me the cart total.",
                        p.price_text,
                        [*search, ("click", "Add to cart", ""), ("answer", "", p.price_text)],
                        kind,
                    )
                )
        return out
