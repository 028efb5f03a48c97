"""RecipeBox: a recipe site (search, recipe pages with ratings, cooking time, ingredients)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from agents.pae.sites.base import Site, SiteTask, esc, page, words_match

DISHES = (
    "Lasagna",
    "Pancakes",
    "Chili",
    "Curry",
    "Risotto",
    "Omelette",
    "Tacos",
    "Soup",
    "Salad",
    "Stir Fry",
    "Muffins",
    "Brownies",
    "Pie",
    "Burger",
    "Dumplings",
    "Paella",
)
STYLES = ("Spicy", "Vegan", "Classic", "Lemon", "Garlic", "Mushroom", "Chicken", "Pumpkin", "Honey", "Coconut")
INGREDIENTS = (
    "flour",
    "eggs",
    "butter",
    "milk",
    "garlic",
    "onion",
    "tomato",
    "rice",
    "cheese",
    "spinach",
    "chickpeas",
    "ginger",
    "lemon",
    "honey",
    "coconut milk",
    "mushrooms",
    "pepper",
    "basil",
)
CUISINES = ("Italian", "Mexican", "Indian", "American", "Chinese", "Spanish", "French")


@dataclass(frozen=True)
class Recipe:
    id: int
    name: str
    cuisine: str
    minutes: int
    rating: float
    reviews: int
    servings: int
    ingredients: tuple[str, ...]
    author: str


def make_recipes(seed: int) -> list[Recipe]:
    rng = random.Random(f"recipes:{seed}")
    pairs = [(s, d) for s in STYLES for d in DISHES]
    rng.shuffle(pairs)
    chefs = ("Ana Ruiz", "Ben Okafor", "Chloe Martin", "Dev Patel", "Emma Stone", "Felix Braun")
    out = []
    for i, (s, d) in enumerate(sorted(pairs[:48])):
        out.append(
            Recipe(
                id=i + 1,
                name=f"{s} {d}",
                cuisine=rng.choice(CUISINES),
                minutes=rng.choice(range(10, 125, 5)),
                rating=round(rng.uniform(3.0, 5.0), 1),
                reviews=rng.randint(3, 900),
                servings=rng.randint(1, 8),
                ingredients=tuple(rng.sample(INGREDIENTS, 5)),
                author=rng.choice(chefs),
            )
        )
    return out


class RecipeSite(Site):
    name = "recipes"
    title = "RecipeBox"
    description = "A recipe website: search recipes, read ingredients, cooking time, servings and ratings."
    demos = (
        "How long does the Vegan Chili take to cook?",
        "What is the rating of the Lemon Pancakes recipe?",
        "Find a Mexican recipe that takes under 30 minutes and tell me its name.",
    )

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.recipes = make_recipes(seed)
        self.by_id = {r.id: r for r in self.recipes}

    def _page(self, body: str, title: str = "", query: str = "") -> HTMLResponse:
        return HTMLResponse(
            page(
                self.title,
                "/recipes/",
                body,
                title=title,
                search_action="/recipes/search",
                search_placeholder="Search recipes",
                query=query,
            )
        )

    def router(self) -> APIRouter:
        r = APIRouter()

        @r.get("/", response_class=HTMLResponse)
        def home() -> HTMLResponse:
            cuisines = "".join(f"<li><a href='/recipes/cuisine/{c}'>{c}</a></li>" for c in CUISINES)
            top = sorted(self.recipes, key=lambda x: -x.rating)[:5]
            feat = "".join(f"<li><a href='/recipes/recipe/{x.id}'>{esc(x.name)}</a></li>" for x in top)
            return self._page(
                f"<h1>RecipeBox</h1><h3>Cuisines</h3><ul>{cuisines}</ul><h3>Top rated</h3><ul>{feat}</ul>"
            )

        def listing(items: list[Recipe]) -> str:
            return (
                "".join(
                    f"<div class='card'><a href='/recipes/recipe/{x.id}'>{esc(x.name)}</a> "
                    f"<span class='muted'>{x.cuisine}, {x.minutes} min, rated {x.rating}</span></div>"
                    for x in items
                )
                or "<p>No recipes found.</p>"
            )

        @r.get("/search", response_class=HTMLResponse)
        def search(q: str = "") -> HTMLResponse:
            q = q[:200]
            hits = [x for x in self.recipes if words_match(q, f"{x.name} {x.cuisine} {' '.join(x.ingredients)}")]
            return self._page(
                f"<h2>Recipes matching '{esc(q)}' ({len(hits)})</h2>{listing(hits[:20])}", title="Search", query=q
            )

        @r.get("/cuisine/{name}", response_class=HTMLResponse)
        def cuisine(name: str) -> HTMLResponse:
            items = sorted((x for x in self.recipes if x.cuisine == name), key=lambda x: (x.minutes, x.name))
            return self._page(f"<h2>{esc(name)} recipes (quickest first)</h2>{listing(items)}", title=name)

        @r.get("/recipe/{rid}", response_class=HTMLResponse)
        def recipe(rid: int) -> HTMLResponse:
            x = self.by_id.get(rid)
            if x is None:
                return self._page("<p>Recipe not found.</p>")
            ings = "".join(f"<li>{esc(i)}</li>" for i in x.ingredients)
            return self._page(
                f"<h1>{esc(x.name)}</h1><p>Rating: {x.rating} ({x.reviews} reviews)</p>"
                f"<p>Total time: {x.minutes} minutes</p><p>Servings: {x.servings}</p><p>Cuisine: {x.cuisine}</p>"
                f"<p>By {esc(x.author)}</p><h3>Ingredients</h3><ul>{ings}</ul>",
                title=x.name,
            )

        return r

    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:
        out: list[SiteTask] = []
        kinds = ["time", "rating", "servings", "author", "quickest"]
        for i in range(n):
            kind = kinds[i % len(kinds)]
            x = rng.choice(self.recipes)
            find = [("type", "Search recipes", x.name), ("click", x.name, "")]
            if kind == "time":
                out.append(
                    self.task(
                        f"time-{x.id}",
                        f"How many minutes does the {x.name} recipe take?",
                        f"{x.minutes}",
                        [*find, ("answer", "", f"{x.minutes} minutes")],
                        kind,
                    )
                )
            elif kind == "rating":
                out.append(
                    self.task(
                        f"rating-{x.id}",
                        f"What is the rating of the {x.name} recipe?",
                        str(x.rating),
                        [*find, ("answer", "", str(x.rating))],
                        kind,
                    )
                )
            elif kind == "servings":
                out.append(
                    self.task(
                        f"servings-{x.id}",
                        f"How many servings does the {x.name} recipe make?",
                        str(x.servings),
                        [*find, ("answer", "", str(x.servings))],
                        kind,
                    )
                )
            elif kind == "author":
                out.append(
                    self.task(
                        f"author-{x.id}",
                        f"Who wrote the {x.name} recipe?",
                        x.author,
                        [*find, ("answer", "", x.author)],
                        kind,
                    )
                )
            else:
                quick = min((y for y in self.recipes if y.cuisine == x.cuisine), key=lambda y: (y.minutes, y.name))
                out.append(
                    self.task(
                        f"quickest-{x.cuisine}",
                        f"What is the quickest {x.cuisine} recipe on RecipeBox?",
                        quick.name,
                        [("click", x.cuisine, ""), ("answer", "", quick.name)],
                        kind,
                    )
                )
        return out
